import type { ChatAccessSubject } from '@switchboard/proto';
import { type Kysely, type RawBuilder, sql, type Transaction } from 'kysely';
import type { ChatsDatabase } from '../db.ts';
import type { ParsedBody } from '../domain/network-body.ts';
import { customerWindowEnd } from '../domain/window.ts';
import { arrayParameter, batchRows } from './array-parameter.ts';

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

/** What the one statement answers, one row per fact, told apart by `kind`. */
interface FoldRow {
  kind: 'kept' | 'message' | 'moved' | 'status' | 'chat';
  key: string | null;
  key2: string | null;
  assigned_to_user: number | null;
  assigned_group: number | null;
  flag: boolean | null;
}

/**
 * Keeps each body as received and folds the bodies, in stream order, into persons, chats,
 * messages and statuses: one statement for the whole batch, whatever its size, with no
 * explicit transaction (one round trip; the profiles of `bench:messaging` showed the time going
 * to round trips, not work). Its parts:
 *
 * - the raw bodies (those not stored before are answered), and the persons they name;
 * - the messages (a wamid seen before is skipped), and each chat with new customer messages
 *   created or moved forward (greatest of times) and reopened, with an event-log entry when it
 *   was resolved;
 * - the statuses and the network's conversation windows;
 * - the named customers' chats' assignment, for the events (the fold changes none).
 *
 * Every write is idempotent (stream sequence, wamid and (wamid, status) are unique) and every
 * chat update commutative (greatest of times), so a redelivered batch stores nothing twice and
 * bodies folded together end as they would one by one. A body whose stream sequence is stored
 * already committed before: it is reported `already_stored` (its messages and statuses are
 * found, not written again, and its contacts' names are not set again). When the statement
 * fails, the caller folds the bodies one by one, so one poison body fails alone.
 */
export async function foldNetworkWebhooks(
  db: Kysely<ChatsDatabase>,
  bodies: readonly InboundBody[],
  opts: StoreOptions = {},
): Promise<FoldedBody[]> {
  if (!bodies.length) return [];
  const parsed = parsedOf(bodies);
  const plan = foldPlan(bodies, parsed);
  const failFor = opts.failFor;
  const rows = failFor?.size
    ? await db.transaction().execute(async (trx) => {
        const folded = await plan.statement.execute(trx);
        const kept = plan.keptIndexes(folded.rows);
        for (const f of parsed) if (kept.has(f.index)) await failForTest(trx, f.parsed, failFor);
        return folded.rows;
      })
    : (await plan.statement.execute(db)).rows;
  return plan.answer(rows);
}

interface Parsed {
  index: number;
  parsed: ParsedBody;
}

/** The bodies that are network JSON, with their place in the batch. */
const parsedOf = (bodies: readonly InboundBody[]): Parsed[] =>
  bodies.flatMap((b, index) => (b.parsed ? [{ index, parsed: b.parsed }] : []));

/** The statement `foldNetworkWebhooks` runs for these bodies (its plan is tested: `test/batch-plans.test.ts`). */
export function foldStatement(bodies: readonly InboundBody[]) {
  return foldPlan(bodies, parsedOf(bodies)).statement;
}

const byKey = <T>([a]: [string, T], [b]: [string, T]) => (a < b ? -1 : a > b ? 1 : 0);

/** The statement of a batch, and how to read its rows back into each body's outcome. */
function foldPlan(bodies: readonly InboundBody[], parsed: readonly Parsed[]) {
  const firstBySeq = new Map<number, number>();
  bodies.forEach((b, i) => {
    if (!firstBySeq.has(b.raw.streamSeq)) firstBySeq.set(b.raw.streamSeq, i);
  });
  const messages = parsed.flatMap((f) => f.parsed.messages.map((m) => ({ index: f.index, m })));
  const statuses = parsed.flatMap((f) => f.parsed.statuses.map((s) => ({ index: f.index, s })));
  const waIds = [...new Set(bodies.flatMap((b) => b.waIds))];

  const ctes = [
    ...bodiesAndPersons(bodies, parsed, firstBySeq),
    ...messagesAndChats(messages, conversationWindows(statuses), waIds),
    ...statusRows(statuses),
  ];
  const none = sql`select null::text, null::text, null::text, null::int, null::int, null::boolean where false`;
  // `old` comes first: it must read the chats (under their lock) before `moved` writes them, or
  // it would find them written by this very statement and skip them.
  const statement = sql<FoldRow>`
    with ${sql.join(ctes)}
    ${messages.length ? sql`select 'moved' as kind, wa_id as key, null::text as key2, null::int as assigned_to_user, null::int as assigned_group, resolved as flag from old` : sql`select null::text as kind, null::text as key, null::text as key2, null::int as assigned_to_user, null::int as assigned_group, null::boolean as flag where false`}
    union all select 'kept', stream_seq::text, null, null, null, null from kept
    union all ${messages.length ? sql`select 'message', wamid, null, null, null, null from ins` : none}
    union all ${statuses.length ? sql`select 'status', wamid, status, null, null, null from st` : none}
    union all select 'chat', wa_id, null, assigned_to_user, assigned_group, null
      from chats where wa_id = any(${arrayParameter(waIds, 'text')})`;

  const keptIndexes = (rows: readonly FoldRow[]) =>
    new Set(rows.flatMap((r) => (r.kind === 'kept' ? [firstBySeq.get(Number(r.key)) ?? -1] : [])));

  function answer(rows: readonly FoldRow[]): FoldedBody[] {
    const kept = keptIndexes(rows);
    const results: Array<IngestResult | 'already_stored'> = bodies.map((_, i) =>
      kept.has(i) ? { storedMessages: 0, storedStatuses: 0, reopened: [] } : 'already_stored',
    );
    const count = (index: number, what: 'storedMessages' | 'storedStatuses') => {
      const r = results[index];
      if (r && r !== 'already_stored') r[what]++;
    };
    // A wamid twice in one batch is stored once, by its first body.
    const insertedMessages = new Set(rows.flatMap((r) => (r.kind === 'message' && r.key ? [r.key] : [])));
    const firstIndexOf = new Map<string, number>();
    for (const { index, m } of messages) {
      if (!insertedMessages.delete(m.wamid)) continue;
      count(index, 'storedMessages');
      if (!firstIndexOf.has(m.from)) firstIndexOf.set(m.from, index);
    }
    for (const r of rows) {
      if (r.kind !== 'moved' || !r.flag || r.key === null) continue;
      const reopenedBy = results[firstIndexOf.get(r.key) ?? -1];
      if (reopenedBy && reopenedBy !== 'already_stored') reopenedBy.reopened.push(r.key);
    }
    const insertedStatuses = new Set(
      rows.flatMap((r) => (r.kind === 'status' ? [`${r.key2} ${r.key}`] : [])),
    );
    for (const { index, s } of statuses)
      if (insertedStatuses.delete(`${s.status} ${s.wamid}`)) count(index, 'storedStatuses');

    const byWaId = new Map(
      rows.flatMap((r) =>
        r.kind === 'chat' && r.key !== null
          ? [
              [
                r.key,
                { wa_id: r.key, assigned_to_user: r.assigned_to_user, assigned_group: r.assigned_group },
              ] as const,
            ]
          : [],
      ),
    );
    return bodies.map((b, i) => ({
      result: results[i] ?? 'already_stored',
      // A chat the statement created is not in its snapshot: new chats are unassigned.
      chats: b.waIds.map((w) => byWaId.get(w) ?? { wa_id: w, assigned_to_user: null, assigned_group: null }),
    }));
  }

  return { statement, keptIndexes, answer };
}

/**
 * How a raw body travels: as text whenever it can, PostgreSQL making both columns of it (nearly
 * every body is its own storable JSON), as bytes when it holds a NUL (text cannot), and its
 * storable JSON apart only when that differs from it.
 */
function bodyForms(r: RawWebhook) {
  const nul = r.body.includes('\0');
  const jsonIsText = !nul && r.storableJson === r.body;
  return {
    ...r,
    text: nul ? null : r.body,
    bytes: nul ? Buffer.from(r.body, 'utf8') : null,
    jsonIsText,
    json: jsonIsText ? null : r.storableJson,
  };
}

/**
 * The raw bodies (`kept`: the sequences not stored before), the persons of the named contacts
 * (the last non-empty profile name in stream order wins, as folding them one by one would leave
 * it; only bodies stored now set names, so a redelivered older body never brings back a name a
 * later one replaced; a person is written only when the name changes), and persons of senders
 * no contact names. Rows are sorted by key, so concurrent folds lock in one order.
 */
function bodiesAndPersons(
  bodies: readonly InboundBody[],
  parsed: readonly Parsed[],
  firstBySeq: ReadonlyMap<number, number>,
): RawBuilder<unknown>[] {
  const raws = [...firstBySeq.values()].map((i) => bodyForms((bodies[i] as InboundBody).raw));
  const contacts = parsed.flatMap((f) =>
    f.parsed.contacts.map((c) => ({ ...c, seq: (bodies[f.index] as InboundBody).raw.streamSeq })),
  );
  const names = new Set(contacts.map((c) => c.wa_id));
  const senders = [...new Set(parsed.flatMap((f) => f.parsed.messages.map((m) => m.from)))].sort();
  const unnamed = senders.filter((w) => !names.has(w));

  const ctes: RawBuilder<unknown>[] = [
    sql`kept as (
      insert into network_webhooks (stream_seq, received_at, signature_verified, body, body_raw)
      select stream_seq, received_at, signature_verified,
        case when json_is_text then text::jsonb else json end,
        coalesce(bytes, convert_to(text, 'UTF8'))
      from ${batchRows(raws, 'r', {
        stream_seq: ['bigint', (r) => r.streamSeq],
        received_at: ['timestamptz', (r) => new Date(r.receivedAt)],
        signature_verified: ['boolean', (r) => r.signatureVerified],
        text: ['text', (r) => r.text],
        bytes: ['bytea', (r) => r.bytes],
        json_is_text: ['boolean', (r) => r.jsonIsText],
        json: ['jsonb', (r) => r.json],
      })}
      on conflict (stream_seq) do nothing
      returning stream_seq)`,
  ];
  if (contacts.length)
    ctes.push(sql`named as (
      insert into persons (wa_id, profile_name)
      select distinct on (v.wa_id) v.wa_id, v.name
      from ${batchRows(
        contacts,
        'v',
        { wa_id: ['text', (c) => c.wa_id], name: ['text', (c) => c.name], seq: ['bigint', (c) => c.seq] },
        'ord',
      )}
      where v.seq in (select stream_seq from kept)
      -- the last non-empty name in stream order, as folding the bodies one by one would leave it
      order by v.wa_id, (v.name <> '') desc, v.ord desc
      on conflict (wa_id) do update set
        profile_name = excluded.profile_name,
        updated_at = now()
      -- Nearly every customer message repeats the name the person has: writing the row anyway
      -- made a new row version and index entries per message.
      where excluded.profile_name <> '' and excluded.profile_name <> persons.profile_name)`);
  if (unnamed.length)
    ctes.push(sql`unnamed as (
      insert into persons (wa_id, profile_name)
      select wa_id, '' from ${batchRows(unnamed, 'u', { wa_id: ['text', (w) => w] })}
      on conflict (wa_id) do nothing)`);
  return ctes;
}

/** The network's conversation expiry per customer in the statuses (greatest of times). */
function conversationWindows(statuses: ReadonlyArray<{ s: ParsedBody['statuses'][number] }>) {
  const windows = new Map<string, number>();
  for (const { s } of statuses)
    if (s.conversationExpiresAt !== undefined)
      windows.set(s.recipient, Math.max(windows.get(s.recipient) ?? 0, s.conversationExpiresAt));
  return [...windows].sort(byKey);
}

/**
 * The messages in stream order (a wamid seen before is skipped; messages of one second list in
 * arrival order, their `created_at` one microsecond apart); each chat with new customer
 * messages created or moved forward and reopened (`moved`; `old` reads, under the chats' lock,
 * which of them were resolved), with an event-log entry for each reopened one; and the network's
 * conversation windows, taken into the same chat write where a chat has both (a row may be
 * written once per statement). Chats are locked in wa_id order.
 */
function messagesAndChats(
  messages: ReadonlyArray<{ m: ParsedBody['messages'][number] }>,
  windows: ReadonlyArray<[string, number]>,
  /** Every customer of the batch: the chats it may lock and write are found by them. */
  waIds: readonly string[],
): RawBuilder<unknown>[] {
  // The chats again as an index condition: joined with the batch alone, a plan made while the
  // table was small (a new inbox) reads all of it for every fold until the next ANALYZE.
  const batchChats = sql`chats.wa_id = any(${arrayParameter(waIds, 'text')})`;
  const ctes: RawBuilder<unknown>[] = [];
  if (windows.length)
    ctes.push(sql`windows as (
      select * from ${batchRows(windows, 'w', {
        wa_id: ['text', ([w]) => w],
        expires_at: ['bigint', ([, t]) => t],
      })})`);
  if (!messages.length) {
    if (windows.length) ctes.push(windowMoved(batchChats));
    return ctes;
  }
  ctes.push(
    sql`v as (
      select * from ${batchRows(
        messages,
        'u',
        {
          wamid: ['text', ({ m }) => m.wamid],
          wa_id: ['text', ({ m }) => m.from],
          type: ['text', ({ m }) => m.type],
          payload: ['jsonb', ({ m }) => JSON.stringify(m.raw)],
          ts: ['bigint', ({ m }) => m.timestamp],
          window_end: ['bigint', ({ m }) => customerWindowEnd(m.timestamp, m.fromAd)],
        },
        'ord',
      )}
    )`,
    sql`ins as (
      insert into messages (id, wamid, wa_id, from_us, type, waba_payload, sender_user_id, timestamp,
                            send_state, idempotency_key, created_at)
      select gen_random_uuid(), wamid, wa_id, false, type, payload, null, ts, null, null,
             now() + make_interval(secs => ord / 1e6)
      from v order by ord
      on conflict (wamid) do nothing
      returning wamid, wa_id
    )`,
    sql`agg as (
      select v.wa_id, max(v.ts) as last_at, max(v.window_end) as window_end,
             ${windows.length ? sql`(select expires_at from windows w where w.wa_id = v.wa_id)` : sql`null::bigint`} as network_end
      from ins join v on v.wamid = ins.wamid group by v.wa_id
    )`,
    sql`old as (
      select chats.wa_id, chats.resolved from chats join agg on agg.wa_id = chats.wa_id
      where ${batchChats}
      order by chats.wa_id for update of chats
    )`,
    sql`moved as (
      insert into chats (wa_id, last_message_at, last_customer_message_at, customer_window_expires_at,
                         network_window_expires_at, resolved)
      select wa_id, last_at, last_at, window_end, network_end, false from agg order by wa_id
      on conflict (wa_id) do update set
        last_message_at = greatest(chats.last_message_at, excluded.last_message_at),
        last_customer_message_at = greatest(chats.last_customer_message_at, excluded.last_customer_message_at),
        customer_window_expires_at = greatest(chats.customer_window_expires_at, excluded.customer_window_expires_at),
        network_window_expires_at = greatest(chats.network_window_expires_at, excluded.network_window_expires_at),
        resolved = false
    )`,
    sql`reopened as (
      insert into audit_logs (id, action, actor_user_id, actor_username, target_type, target_id, details, at)
      select gen_random_uuid(), 'chat.reopened', null, null, 'chat', wa_id, ${JSON.stringify(REOPENED_DETAILS)}::jsonb, now()
      from old where resolved
    )`,
  );
  if (windows.length)
    ctes.push(windowMoved(sql`${batchChats} and windows.wa_id not in (select wa_id from agg)`));
  return ctes;
}

/**
 * The network's conversation windows moved forward on chats that have them (`windows`), where
 * `also` holds. A chat whose window would not grow is not written: most statuses repeat the
 * expiry their conversation already has, and writing the row anyway would lock it against the
 * sends to that customer (each send brings three statuses back). `also` names the batch's chats
 * by key (`batchChats`), so the chats are found through their index whatever the table's size
 * when the statement was planned.
 */
function windowMoved(also: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`window_moved as (
    update chats set network_window_expires_at = windows.expires_at
    from windows
    where chats.wa_id = windows.wa_id and ${also}
      and (chats.network_window_expires_at is null or chats.network_window_expires_at < windows.expires_at))`;
}

/** Why a customer message reopens a resolved chat, as the event log records it. */
const REOPENED_DETAILS = { reason: 'customer_message' };

/** The statuses (`st`: those new). */
function statusRows(statuses: ReadonlyArray<{ s: ParsedBody['statuses'][number] }>): RawBuilder<unknown>[] {
  if (!statuses.length) return [];
  return [
    sql`st as (
      insert into message_statuses (wamid, status, timestamp, errors)
      select * from ${batchRows(statuses, 's', {
        wamid: ['text', ({ s }) => s.wamid],
        status: ['text', ({ s }) => s.status],
        timestamp: ['bigint', ({ s }) => s.timestamp],
        errors: ['jsonb', ({ s }) => (s.errors ? JSON.stringify(s.errors) : null)],
      })}
      on conflict (wamid, status) do nothing
      returning wamid, status)`,
  ];
}
