import type { ChatAccessSubject } from '@switchboard/proto';
import { type Kysely, type RawBuilder, sql, type Transaction } from 'kysely';
import type { ChatsDatabase } from '../db.ts';
import type { ParsedBody } from '../domain/network-body.ts';
import { customerWindowEnd } from '../domain/window.ts';
import { chatAuditEntry, insertAuditEntry } from './audit.ts';

export interface IngestResult {
  storedMessages: number;
  storedStatuses: number;
  /** Resolved chats a new customer message reopened. */
  reopened: string[];
}

export interface RawWebhook {
  streamSeq: number;
  receivedAt: number;
  signatureVerified: boolean;
  /** The body exactly as received. */
  body: string;
  /** The body as `jsonb` can hold it (`storableJsonText`); null when it is not JSON. */
  storableJson: string | null;
}

/** One body to fold: `parsed` must come from the storable JSON text, so its strings fit `text`. */
export interface InboundBody {
  raw: RawWebhook;
  parsed: ParsedBody | null;
  /** Customers the body names: their chats' assignment is read after the fold. */
  waIds: readonly string[];
}

export interface FoldedBody {
  /** `already_stored`: its stream sequence committed before (a redelivery); nothing written. */
  result: IngestResult | 'already_stored';
  /** The named customers' chats as the fold left them, for the event that leaves chats. */
  chats: ChatAccessSubject[];
}

export interface StoreOptions {
  /**
   * Test hook (`CHATS_TEST_FAIL_WA_IDS`, off by default): a body naming one of these wa_ids
   * fails inside its transaction with the mapped SQLSTATE, raised by PostgreSQL itself.
   */
  failFor?: ReadonlyMap<string, string> | undefined;
}

type Trx = Transaction<ChatsDatabase>;

const SQLSTATE = /^[0-9A-Z]{5}$/;

async function failForTest(
  trx: Trx,
  parsed: ParsedBody,
  failFor: ReadonlyMap<string, string>,
): Promise<void> {
  const named = [
    ...parsed.contacts.map((c) => c.wa_id),
    ...parsed.messages.map((m) => m.from),
    ...parsed.statuses.map((s) => s.recipient),
  ];
  const code = named.map((w) => failFor.get(w)).find((c) => c !== undefined);
  if (!code || !SQLSTATE.test(code)) return;
  await sql
    .raw(`do $$ begin raise exception 'CHATS_TEST_FAIL_WA_IDS test hook' using errcode = '${code}'; end $$`)
    .execute(trx);
}

const values = (rows: RawBuilder<unknown>[]) => sql.join(rows);

/**
 * Keeps each body as received and folds the bodies, in stream order, into persons, chats,
 * messages and statuses: one transaction of three statements for the whole batch, whatever its
 * size (the profiles of `bench:messaging` showed the time going to round trips, not work):
 *
 * 1. the raw bodies, the persons and the chats (independent inserts, one statement);
 * 2. the messages, and the chats they move forward and reopen (one statement: the update reads
 *    what the insert returned);
 * 3. the statuses, the network's conversation windows, and the chats' assignment for the events.
 *
 * Every write is idempotent (stream sequence, wamid and (wamid, status) are unique) and every
 * chat update commutative (greatest of times), so a redelivered batch stores nothing twice and
 * bodies folded together end as they would one by one. A body whose stream sequence is stored
 * already committed before: it is reported `already_stored` (its messages and statuses are
 * found, not written again, and its contacts' names are not set again). When the transaction fails, the caller folds the bodies one by one, so one poison
 * body fails alone.
 */
export async function foldNetworkWebhooks(
  db: Kysely<ChatsDatabase>,
  bodies: readonly InboundBody[],
  opts: StoreOptions = {},
): Promise<FoldedBody[]> {
  if (!bodies.length) return [];
  return db.transaction().execute(async (trx) => {
    const parsed = bodies.flatMap((b, index) => (b.parsed ? [{ index, parsed: b.parsed }] : []));
    const kept = await keepBodiesPersonsAndChats(trx, bodies, parsed);
    if (opts.failFor?.size)
      for (const f of parsed) if (kept.has(f.index)) await failForTest(trx, f.parsed, opts.failFor);

    const results: Array<IngestResult | 'already_stored'> = bodies.map((_, i) =>
      kept.has(i) ? { storedMessages: 0, storedStatuses: 0, reopened: [] } : 'already_stored',
    );
    const count = (index: number, what: 'storedMessages' | 'storedStatuses') => {
      const r = results[index];
      if (r && r !== 'already_stored') r[what]++;
    };

    const { stored, reopened } = await insertMessagesAndMoveChats(trx, parsed);
    for (const index of stored) count(index, 'storedMessages');
    for (const { index, waId } of reopened) {
      const r = results[index];
      if (r && r !== 'already_stored') r.reopened.push(waId);
      await insertAuditEntry(
        trx,
        chatAuditEntry(null, 'chat.reopened', waId, { reason: 'customer_message' }),
      );
    }
    const waIds = [...new Set(bodies.flatMap((b) => b.waIds))];
    const { statuses, subjects } = await insertStatusesAndReadChats(trx, parsed, waIds);
    for (const index of statuses) count(index, 'storedStatuses');

    const byWaId = new Map(subjects.map((s) => [s.wa_id, s]));
    return bodies.map((b, i) => ({
      result: results[i] ?? 'already_stored',
      chats: b.waIds.map((w) => byWaId.get(w) ?? { wa_id: w, assigned_to_user: null, assigned_group: null }),
    }));
  });
}

interface Parsed {
  index: number;
  parsed: ParsedBody;
}

const byKey = <T>([a]: [string, T], [b]: [string, T]) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Statement 1: the raw bodies (the indexes of those not stored before are answered), the
 * persons of the named contacts (the last non-empty profile name in stream order wins, as
 * folding them one by one would leave it), persons of senders no contact names, and a chat for
 * every sender. Rows are sorted by key, so concurrent folds lock in one order.
 */
async function keepBodiesPersonsAndChats(
  trx: Trx,
  bodies: readonly InboundBody[],
  parsed: readonly Parsed[],
): Promise<Set<number>> {
  const firstBySeq = new Map<number, number>();
  bodies.forEach((b, i) => {
    if (!firstBySeq.has(b.raw.streamSeq)) firstBySeq.set(b.raw.streamSeq, i);
  });
  const raws = [...firstBySeq.values()].map((i) => (bodies[i] as InboundBody).raw);
  // Every contact with its body's sequence: only bodies stored now set names (a redelivered
  // older body must not bring back a name a later one replaced).
  const contacts = parsed.flatMap((f) =>
    f.parsed.contacts.map((c) => ({ ...c, seq: (bodies[f.index] as InboundBody).raw.streamSeq })),
  );
  const names = new Set(contacts.map((c) => c.wa_id));
  const senders = [...new Set(parsed.flatMap((f) => f.parsed.messages.map((m) => m.from)))].sort();
  const unnamed = senders.filter((w) => !names.has(w));

  const ctes: RawBuilder<unknown>[] = [
    sql`kept as (
      insert into network_webhooks (stream_seq, received_at, signature_verified, body, body_raw)
      values ${values(
        raws.map(
          (r) =>
            sql`(${r.streamSeq}::bigint, ${new Date(r.receivedAt)}::timestamptz, ${r.signatureVerified}, ${r.storableJson}::jsonb, ${Buffer.from(r.body, 'utf8')}::bytea)`,
        ),
      )}
      on conflict (stream_seq) do nothing
      returning stream_seq)`,
  ];
  if (contacts.length)
    ctes.push(sql`named as (
      insert into persons (wa_id, profile_name)
      select distinct on (v.wa_id) v.wa_id, v.name
      from (values ${values(
        contacts.map((c, ord) => sql`(${c.wa_id}::text, ${c.name}::text, ${c.seq}::bigint, ${ord}::int)`),
      )}) as v (wa_id, name, seq, ord)
      where v.seq in (select stream_seq from kept)
      -- the last non-empty name in stream order, as folding the bodies one by one would leave it
      order by v.wa_id, (v.name <> '') desc, v.ord desc
      on conflict (wa_id) do update set
        profile_name = coalesce(nullif(excluded.profile_name, ''), persons.profile_name),
        updated_at = now())`);
  if (unnamed.length)
    ctes.push(sql`unnamed as (
      insert into persons (wa_id, profile_name) values ${values(unnamed.map((w) => sql`(${w}, '')`))}
      on conflict (wa_id) do nothing)`);
  if (senders.length)
    ctes.push(sql`new_chats as (
      insert into chats (wa_id) values ${values(senders.map((w) => sql`(${w})`))}
      on conflict (wa_id) do nothing)`);
  const rows = await sql<{ stream_seq: number }>`with ${sql.join(ctes)} select stream_seq from kept`.execute(
    trx,
  );
  return new Set(rows.rows.map((r) => firstBySeq.get(Number(r.stream_seq)) ?? -1));
}

/**
 * Statement 2: the messages in stream order (a wamid seen before is skipped; messages of one
 * second list in arrival order, their `created_at` one microsecond apart), and each chat with
 * new customer messages moved forward (greatest of times) and reopened. Answers, per new
 * message, the index of the first body that carried it, and the chats that were resolved, each
 * with the first body that reopened it.
 */
async function insertMessagesAndMoveChats(
  trx: Trx,
  parsed: readonly Parsed[],
): Promise<{ stored: number[]; reopened: Array<{ index: number; waId: string }> }> {
  const all = parsed.flatMap((f) => f.parsed.messages.map((m) => ({ index: f.index, m })));
  if (!all.length) return { stored: [], reopened: [] };
  const rows = await sql<{ wamid: string | null; wa_id: string | null; was_resolved: boolean | null }>`
    with v (ord, wamid, wa_id, type, payload, ts, window_end) as (
      values ${values(
        all.map(
          ({ m }, ord) =>
            sql`(${ord}::int, ${m.wamid}, ${m.from}, ${m.type}, ${JSON.stringify(m.raw)}::jsonb, ${m.timestamp}::bigint, ${customerWindowEnd(m.timestamp, m.fromAd)}::bigint)`,
        ),
      )}
    ),
    ins as (
      insert into messages (id, wamid, wa_id, from_us, type, waba_payload, sender_user_id, timestamp,
                            send_state, idempotency_key, created_at)
      select gen_random_uuid(), wamid, wa_id, false, type, payload, null, ts, null, null,
             now() + make_interval(secs => ord / 1e6)
      from v order by ord
      on conflict (wamid) do nothing
      returning wamid, wa_id
    ),
    agg as (
      select v.wa_id, max(v.ts) as last_at, max(v.window_end) as window_end
      from ins join v on v.wamid = ins.wamid group by v.wa_id
    ),
    old as (
      select chats.wa_id, chats.resolved from chats join agg on agg.wa_id = chats.wa_id
      order by chats.wa_id for update of chats
    ),
    moved as (
      update chats set
        last_message_at = greatest(chats.last_message_at, agg.last_at),
        last_customer_message_at = greatest(coalesce(chats.last_customer_message_at, 0), agg.last_at),
        customer_window_expires_at = greatest(coalesce(chats.customer_window_expires_at, 0), agg.window_end),
        resolved = false
      from agg join old on old.wa_id = agg.wa_id
      where chats.wa_id = agg.wa_id
      returning chats.wa_id, old.resolved as was_resolved
    )
    select wamid, null::text as wa_id, null::boolean as was_resolved from ins
    union all
    select null, wa_id, was_resolved from moved`.execute(trx);
  const inserted = new Set(rows.rows.flatMap((r) => (r.wamid === null ? [] : [r.wamid])));
  const stored: number[] = [];
  const firstIndexOf = new Map<string, number>();
  for (const { index, m } of all) {
    // A wamid twice in one batch is stored once, by its first body.
    if (!inserted.delete(m.wamid)) continue;
    stored.push(index);
    if (!firstIndexOf.has(m.from)) firstIndexOf.set(m.from, index);
  }
  const reopened = rows.rows.flatMap((r) =>
    r.wa_id !== null && r.was_resolved ? [{ index: firstIndexOf.get(r.wa_id) ?? -1, waId: r.wa_id }] : [],
  );
  return { stored, reopened };
}

/**
 * Statement 3: the statuses (per new one, the index of the first body that carried it), the
 * network's conversation expiry per customer (greatest of times), and the named customers'
 * chats' assignment as the events need it (read in the same statement: the fold changes no
 * assignment).
 */
async function insertStatusesAndReadChats(
  trx: Trx,
  parsed: readonly Parsed[],
  waIds: readonly string[],
): Promise<{ statuses: number[]; subjects: ChatAccessSubject[] }> {
  const all = parsed.flatMap((f) => f.parsed.statuses.map((s) => ({ index: f.index, s })));
  const windows = new Map<string, number>();
  for (const { s } of all)
    if (s.conversationExpiresAt !== undefined)
      windows.set(s.recipient, Math.max(windows.get(s.recipient) ?? 0, s.conversationExpiresAt));
  if (!all.length && !waIds.length) return { statuses: [], subjects: [] };

  const ctes: RawBuilder<unknown>[] = [];
  if (all.length)
    ctes.push(sql`ins as (
      insert into message_statuses (wamid, status, timestamp, errors)
      values ${values(
        all.map(
          ({ s }) =>
            sql`(${s.wamid}, ${s.status}, ${s.timestamp}::bigint, ${s.errors ? JSON.stringify(s.errors) : null}::jsonb)`,
        ),
      )}
      on conflict (wamid, status) do nothing
      returning wamid, status)`);
  if (windows.size)
    ctes.push(sql`windows as (
      update chats set network_window_expires_at = greatest(coalesce(chats.network_window_expires_at, 0), v.expires_at)
      from (values ${values([...windows].sort(byKey).map(([w, t]) => sql`(${w}::text, ${t}::bigint)`))}) as v (wa_id, expires_at)
      where chats.wa_id = v.wa_id)`);
  const statusRows = all.length
    ? sql`select wamid, status, null::text as wa_id, null::int as assigned_to_user, null::int as assigned_group from ins`
    : sql`select null::text as wamid, null::text as status, null::text as wa_id, null::int as assigned_to_user, null::int as assigned_group where false`;
  const rows = await sql<{
    wamid: string | null;
    status: string | null;
    wa_id: string | null;
    assigned_to_user: number | null;
    assigned_group: number | null;
  }>`
    ${ctes.length ? sql`with ${sql.join(ctes)}` : sql``}
    ${statusRows}
    union all
    select null, null, wa_id, assigned_to_user, assigned_group from chats where wa_id = any(${[...waIds]}::text[])`.execute(
    trx,
  );
  const inserted = new Set(
    rows.rows.flatMap((r) => (r.wamid !== null && r.status !== null ? [`${r.status} ${r.wamid}`] : [])),
  );
  const statuses = all.flatMap(({ index, s }) => (inserted.delete(`${s.status} ${s.wamid}`) ? [index] : []));
  const subjects = rows.rows.flatMap((r) =>
    r.wa_id === null
      ? []
      : [{ wa_id: r.wa_id, assigned_to_user: r.assigned_to_user, assigned_group: r.assigned_group }],
  );
  return { statuses, subjects };
}
