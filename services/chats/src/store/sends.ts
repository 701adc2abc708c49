import { type Kysely, type Selectable, sql } from 'kysely';
import type { ChatsDatabase, MessagesTable } from '../db.ts';
import { businessWindowEnd } from '../domain/window.ts';
import { arrayParameter, batchRows } from './array-parameter.ts';
import { statusKey } from './views.ts';

// The delivery worker's reads and writes of a send's state (send_state, lease, attempts).

type Db = Kysely<ChatsDatabase>;

/** The ids of a batch: the statement is planned once per connection (`arrayParameter`). */
const idsOf = (ids: readonly string[]) => arrayParameter(ids, 'uuid');

const leaseUntil = (seconds: number) => sql<Date>`now() + make_interval(secs => ${seconds})`;

const HEAD_COLUMNS = sql`
  id,
  coalesce(send_lease_until > now(), false) as leased,
  greatest(0, extract(epoch from (coalesce(next_attempt_at, now()) - now())) * 1000)::float8 as due_in_ms,
  extract(epoch from (now() - coalesce(next_attempt_at, created_at)))::float8 as overdue_s`;

export interface QueueHead {
  id: string;
  leased: boolean;
  due_in_ms: number;
  overdue_s: number;
}

/** The earliest unsent message of a customer, with its timing in database time. */
export async function headOfQueue(db: Db, waId: string): Promise<QueueHead | undefined> {
  const result = await sql<QueueHead>`
    select ${HEAD_COLUMNS} from messages
    where wa_id = ${waId} and send_state = 'queued'
    order by send_seq limit 1`.execute(db);
  return result.rows[0];
}

/** A send's customer and state, the head of its customer's queue, and the send itself when claimed. */
export interface SendStateHeadAndClaim {
  id: string;
  wa_id: string;
  send_state: string | null;
  head: QueueHead | undefined;
  claimed: ClaimedSend | undefined;
}

/**
 * For each send: its customer and state, the head of that customer's queue (the earliest send
 * still queued), which decides whether this one may go now, and, when it is that head, due, and
 * nobody holds it, the send itself with its lease taken: all in one round trip, for any number
 * of sends (the delivery worker claims the commands that arrived while a claim ran together,
 * `domain/group-commit.ts`). Answers in the order given, undefined for a send that does not exist.
 * Two sends of one customer in one statement see the same head: at most that head is claimed.
 */
export async function sendStatesHeadsAndClaims(
  db: Db,
  ids: readonly string[],
  leaseSeconds: number,
): Promise<(SendStateHeadAndClaim | undefined)[]> {
  const result = await claimStatement(ids, leaseSeconds).execute(db);
  const byId = new Map(result.rows.map((row) => [row.id, row]));
  // The same send asked twice in one batch (a command redelivered while its first copy waited)
  // is claimed once: only its first asker gets the claim, the others see it held.
  const handedOut = new Set<string>();
  return ids.map((id) => {
    const row = byId.get(id);
    if (!row) return undefined;
    const claimed = row.claimed && !handedOut.has(id) ? row.claimed : undefined;
    if (claimed) handedOut.add(id);
    return {
      id: row.id,
      wa_id: row.wa_id,
      send_state: row.send_state,
      head: row.head ?? undefined,
      claimed,
    };
  });
}

/** The statement of `sendStatesHeadsAndClaims` (its plan is tested: `test/batch-plans.test.ts`). */
export function claimStatement(ids: readonly string[], leaseSeconds: number) {
  return sql<{
    id: string;
    wa_id: string;
    send_state: string | null;
    head: QueueHead | null;
    claimed: ClaimedSend | null;
  }>`
    with m as (
      select id, wa_id, send_state from messages where id = any(${idsOf(ids)})),
    head as (
      select w.wa_id, h.* from (select distinct wa_id from m) w cross join lateral (
        select ${HEAD_COLUMNS} from messages
        where wa_id = w.wa_id and send_state = 'queued'
        order by send_seq limit 1) h),
    claimed as (
      update messages set send_lease_until = ${leaseUntil(leaseSeconds)}
      where id = any(${idsOf(ids)}) and send_state = 'queued'
        and id in (select id from head where not leased and due_in_ms <= 0)
        and (send_lease_until is null or send_lease_until <= now())
      returning id, wamid, wa_id, waba_payload, send_attempts)
    select m.id, m.wa_id, m.send_state,
      (select json_build_object('id', h.id, 'leased', h.leased, 'due_in_ms', h.due_in_ms,
        'overdue_s', h.overdue_s) from head h where h.wa_id = m.wa_id) as head,
      (select row_to_json(c) from claimed c where c.id = m.id) as claimed
    from m`;
}

/** What a worker needs of the send it holds. */
export type ClaimedSend = Pick<
  Selectable<MessagesTable>,
  'id' | 'wamid' | 'wa_id' | 'waba_payload' | 'send_attempts'
>;

/** Takes the lease of a queued send nobody holds; the message when taken. */
export async function claimSendLease(
  db: Db,
  id: string,
  leaseSeconds: number,
): Promise<ClaimedSend | undefined> {
  return db
    .updateTable('messages')
    .set({ send_lease_until: leaseUntil(leaseSeconds) })
    .where((eb) => eb.and([eb('id', '=', id), eb('send_state', '=', 'queued')]))
    .where((eb) =>
      eb.or([eb('send_lease_until', 'is', null), eb('send_lease_until', '<=', sql<Date>`now()`)]),
    )
    .returning(['id', 'wamid', 'wa_id', 'waba_payload', 'send_attempts'])
    .executeTakeFirst();
}

/** A send's state and how long its lease has left. */
export async function sendLeaseLeft(db: Db, id: string) {
  return db
    .selectFrom('messages')
    .select([
      'send_state',
      sql<number>`greatest(0, extract(epoch from (send_lease_until - now())) * 1000)::float8`.as('left_ms'),
    ])
    .where('id', '=', id)
    .executeTakeFirst();
}

/** Extends the lease of a send still queued. */
export async function renewSendLease(db: Db, id: string, leaseSeconds: number): Promise<void> {
  await db
    .updateTable('messages')
    .set({ send_lease_until: leaseUntil(leaseSeconds) })
    .where('id', '=', id)
    .where('send_state', '=', 'queued')
    .execute();
}

/** Records a failed network attempt and when the next one is due, releasing the lease. */
export async function scheduleSendRetry(
  db: Db,
  id: string,
  attempts: number,
  delayMs: number,
): Promise<void> {
  await db
    .updateTable('messages')
    .set({
      send_attempts: attempts,
      next_attempt_at: sql<Date>`now() + make_interval(secs => ${delayMs / 1000})`,
      send_lease_until: null,
    })
    .where('id', '=', id)
    .execute();
}

/**
 * Marks a send failed and stores its `failed` status with the errors, in one transaction. A
 * failed template opened no window: the chat's business window becomes again what its other
 * templates opened (acceptance opened it, so a free-form reply could follow at once).
 */
export async function recordSendFailed(
  db: Db,
  m: { id: string; wamid: string | null },
  errors: unknown[],
  timestamp: number,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const sent = await trx
      .selectFrom('messages')
      .select(['wa_id', 'type'])
      .where('id', '=', m.id)
      .executeTakeFirst();
    // The chat first, as accepts and the inbound fold lock it before its messages: no deadlock.
    if (sent?.type === 'template') {
      await trx.selectFrom('chats').select('wa_id').where('wa_id', '=', sent.wa_id).forUpdate().execute();
    }
    await trx
      .updateTable('messages')
      .set({ send_state: 'failed', send_lease_until: null, next_attempt_at: null })
      .where('id', '=', m.id)
      .execute();
    await trx
      .insertInto('message_statuses')
      .values({ wamid: statusKey(m), status: 'failed', timestamp, errors: JSON.stringify(errors) })
      .onConflict((oc) => oc.columns(['wamid', 'status']).doNothing())
      .execute();
    if (sent?.type === 'template') {
      await trx
        .updateTable('chats')
        .set({
          business_window_expires_at: sql<number | null>`(
            select max(timestamp) + ${businessWindowEnd(0)} from messages
            where wa_id = ${sent.wa_id} and from_us and type = 'template' and send_state <> 'failed')`,
        })
        .where('wa_id', '=', sent.wa_id)
        .execute();
    }
  });
}

/**
 * Marks sends sent with the network's wamids and answers, in the same round trip, for each the
 * head of its customer's queue after it (the next send that may go), in the order given. One
 * statement for any number of sends: the delivery worker marks the sends that finished while
 * the previous mark ran all at once (`domain/group-commit.ts`).
 */
export async function recordSendsSent(
  db: Db,
  marks: readonly { id: string; wamid: string | null }[],
): Promise<(QueueHead | undefined)[]> {
  const result = await sentMarkStatement(marks).execute(db);
  const heads = new Map(result.rows.map(({ sent_id, ...head }) => [sent_id, head]));
  return marks.map((m) => heads.get(m.id));
}

/** The statement of `recordSendsSent` (its plan is tested: `test/batch-plans.test.ts`). */
export function sentMarkStatement(marks: readonly { id: string; wamid: string | null }[]) {
  const ids = marks.map((m) => m.id);
  return sql<QueueHead & { sent_id: string }>`
    with input as (
      select * from ${batchRows(marks, 't', { id: ['uuid', (m) => m.id], wamid: ['text', (m) => m.wamid] })}),
    sent as (
      update messages set wamid = input.wamid, send_state = 'sent', send_lease_until = null,
        next_attempt_at = null
      from input
      -- The ids again as an index condition: joined with the batch alone, a plan made while the
      -- table was small (a new inbox) read all of it for every mark until the next ANALYZE.
      where messages.id = any(${idsOf(ids)}) and messages.id = input.id
      returning messages.id, messages.wa_id)
    select sent.id as sent_id, head.* from sent cross join lateral (
      select ${HEAD_COLUMNS} from messages
      -- The statement's snapshot still sees the sends it marks as queued.
      where wa_id = sent.wa_id and send_state = 'queued' and id <> all(${idsOf(ids)})
      order by send_seq limit 1) head`;
}

/** The errors stored with a failed send's `failed` status. */
export async function failedSendErrors(db: Db, id: string): Promise<unknown[]> {
  const status = await db
    .selectFrom('message_statuses')
    .select('errors')
    .where('wamid', '=', id)
    .where('status', '=', 'failed')
    .executeTakeFirst();
  return Array.isArray(status?.errors) ? (status.errors as unknown[]) : [];
}
