import { type Kysely, type Selectable, sql } from 'kysely';
import type { ChatsDatabase, MessagesTable } from '../db.ts';
import { statusKey } from './views.ts';

// The delivery worker's reads and writes of a send's state (send_state, lease, attempts).

type Db = Kysely<ChatsDatabase>;

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

/**
 * A send's customer and state and, in the same round trip, the head of that customer's queue
 * (the earliest send still queued), which decides whether this one may go now.
 */
export async function sendStateAndHead(
  db: Db,
  id: string,
): Promise<
  { id: string; wa_id: string; send_state: string | null; head: QueueHead | undefined } | undefined
> {
  const result = await sql<{
    id: string;
    wa_id: string;
    send_state: string | null;
    head: QueueHead | null;
  }>`
    select m.id, m.wa_id, m.send_state,
      (select row_to_json(h) from (
         select ${HEAD_COLUMNS} from messages
         where wa_id = m.wa_id and send_state = 'queued'
         order by send_seq limit 1) h) as head
    from messages m where m.id = ${id}`.execute(db);
  const row = result.rows[0];
  return row && { id: row.id, wa_id: row.wa_id, send_state: row.send_state, head: row.head ?? undefined };
}

/** Takes the lease of a queued send nobody holds; the message when taken. */
export async function claimSendLease(
  db: Db,
  id: string,
  leaseSeconds: number,
): Promise<Selectable<MessagesTable> | undefined> {
  return db
    .updateTable('messages')
    .set({ send_lease_until: leaseUntil(leaseSeconds) })
    .where('id', '=', id)
    .where('send_state', '=', 'queued')
    .where((eb) =>
      eb.or([eb('send_lease_until', 'is', null), eb('send_lease_until', '<=', sql<Date>`now()`)]),
    )
    .returningAll()
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

/** Marks a send failed and stores its `failed` status with the errors, in one transaction. */
export async function recordSendFailed(
  db: Db,
  m: { id: string; wamid: string | null },
  errors: unknown[],
  timestamp: number,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
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
  });
}

/** Marks a send sent with the network's wamid. */
export async function recordSendSent(db: Db, id: string, wamid: string | null): Promise<void> {
  await db
    .updateTable('messages')
    .set({ wamid, send_state: 'sent', send_lease_until: null, next_attempt_at: null })
    .where('id', '=', id)
    .execute();
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
