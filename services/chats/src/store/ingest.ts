import { randomUUID } from 'node:crypto';
import type { ChatAccessSubject } from '@switchboard/proto';
import { type Kysely, type RawBuilder, sql, type Transaction } from 'kysely';
import type { ChatsDatabase } from '../db.ts';
import type { ParsedBody } from '../domain/network-body.ts';
import { customerWindowEnd } from '../domain/window.ts';
import { chatAuditEntry, insertAuditEntry } from './audit.ts';
import { chatAccessSubjects, newChat } from './chats.ts';

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
 * messages and statuses: one transaction and one multi-row statement per table for the whole
 * batch (the profiles of `bench:messaging` showed the time going to round trips, not work).
 *
 * Every write is idempotent (stream sequence, wamid and (wamid, status) are unique) and every
 * chat update commutative (greatest of times), so a redelivered batch stores nothing twice and
 * bodies folded together end as they would one by one. A body whose stream sequence is stored
 * already committed before and is not folded again. When the transaction fails, the caller
 * folds the bodies one by one, so one poison body fails alone.
 */
export async function foldNetworkWebhooks(
  db: Kysely<ChatsDatabase>,
  bodies: readonly InboundBody[],
  opts: StoreOptions = {},
): Promise<FoldedBody[]> {
  if (!bodies.length) return [];
  return db.transaction().execute(async (trx) => {
    const kept = await keepRawBodies(trx, bodies);
    const fresh = bodies.flatMap((b, index) =>
      kept.has(index) && b.parsed ? [{ index, parsed: b.parsed }] : [],
    );
    if (opts.failFor?.size) for (const f of fresh) await failForTest(trx, f.parsed, opts.failFor);

    const results: Array<IngestResult | 'already_stored'> = bodies.map((_, i) =>
      kept.has(i) ? { storedMessages: 0, storedStatuses: 0, reopened: [] } : 'already_stored',
    );
    const resultOf = (index: number) => results[index] as IngestResult;

    await upsertPersonsAndChats(trx, fresh);
    const storedMessages = await insertMessages(trx, fresh);
    for (const m of storedMessages) resultOf(m.index).storedMessages++;
    for (const r of await moveChatsForward(trx, storedMessages)) resultOf(r.index).reopened.push(r.waId);
    for (const index of await insertStatuses(trx, fresh)) resultOf(index).storedStatuses++;
    await moveNetworkWindows(trx, fresh);

    const subjects = await chatAccessSubjects(trx, [...new Set(bodies.flatMap((b) => b.waIds))]);
    const byWaId = new Map(subjects.map((s) => [s.wa_id, s]));
    return bodies.map((b, i) => ({
      result: results[i] ?? 'already_stored',
      chats: b.waIds.flatMap((w) => {
        const s = byWaId.get(w);
        return s ? [s] : [];
      }),
    }));
  });
}

/** Stores the raw bodies; the indexes of those not stored before. */
async function keepRawBodies(trx: Trx, bodies: readonly InboundBody[]): Promise<Set<number>> {
  const firstBySeq = new Map<number, number>();
  bodies.forEach((b, i) => {
    if (!firstBySeq.has(b.raw.streamSeq)) firstBySeq.set(b.raw.streamSeq, i);
  });
  const rows = await trx
    .insertInto('network_webhooks')
    .values(
      [...firstBySeq.values()].map((i) => {
        const raw = (bodies[i] as InboundBody).raw;
        return {
          stream_seq: raw.streamSeq,
          received_at: new Date(raw.receivedAt),
          signature_verified: raw.signatureVerified,
          body: raw.storableJson,
          body_raw: Buffer.from(raw.body, 'utf8'),
        };
      }),
    )
    .onConflict((oc) => oc.column('stream_seq').doNothing())
    .returning('stream_seq')
    .execute();
  return new Set(rows.map((r) => firstBySeq.get(Number(r.stream_seq)) ?? -1));
}

interface Fresh {
  index: number;
  parsed: ParsedBody;
}

/**
 * Persons of the named contacts (the last non-empty profile name in stream order wins, as
 * folding them one by one would leave it), persons of senders no contact names, and a chat for
 * every sender. Rows sorted by wa_id, so concurrent folds lock in one order.
 */
async function upsertPersonsAndChats(trx: Trx, fresh: readonly Fresh[]): Promise<void> {
  const names = new Map<string, string>();
  for (const f of fresh)
    for (const c of f.parsed.contacts) if (c.name !== '' || !names.has(c.wa_id)) names.set(c.wa_id, c.name);
  const senders = new Set(fresh.flatMap((f) => f.parsed.messages.map((m) => m.from)));
  const unnamed = [...senders].filter((w) => !names.has(w)).sort();
  if (names.size) {
    await trx
      .insertInto('persons')
      .values(
        [...names]
          .sort(([a], [b]) => (a < b ? -1 : 1))
          .map(([wa_id, name]) => ({ wa_id, profile_name: name })),
      )
      .onConflict((oc) =>
        oc.column('wa_id').doUpdateSet({
          profile_name: (eb) =>
            eb.fn.coalesce(sql<string>`nullif(excluded.profile_name, '')`, eb.ref('persons.profile_name')),
          updated_at: new Date(),
        }),
      )
      .execute();
  }
  if (unnamed.length) {
    await trx
      .insertInto('persons')
      .values(unnamed.map((wa_id) => ({ wa_id, profile_name: '' })))
      .onConflict((oc) => oc.column('wa_id').doNothing())
      .execute();
  }
  if (senders.size) {
    await trx
      .insertInto('chats')
      .values([...senders].sort().map(newChat))
      .onConflict((oc) => oc.column('wa_id').doNothing())
      .execute();
  }
}

interface StoredMessage {
  index: number;
  waId: string;
  timestamp: number;
  windowEnd: number;
}

/** Inserts the messages in stream order; those new (a wamid seen before is skipped). */
async function insertMessages(trx: Trx, fresh: readonly Fresh[]): Promise<StoredMessage[]> {
  const all = fresh.flatMap((f) => f.parsed.messages.map((m) => ({ index: f.index, m })));
  if (!all.length) return [];
  const rows = await trx
    .insertInto('messages')
    .values(
      all.map(({ m }, ordinal) => ({
        id: randomUUID(),
        wamid: m.wamid,
        wa_id: m.from,
        from_us: false,
        type: m.type,
        waba_payload: JSON.stringify(m.raw),
        sender_user_id: null,
        timestamp: m.timestamp,
        send_state: null,
        idempotency_key: null,
        // Messages of one second list in the order they arrived: one microsecond apart.
        created_at: sql<Date>`now() + make_interval(secs => ${ordinal / 1e6})`,
      })),
    )
    .onConflict((oc) => oc.column('wamid').doNothing())
    .returning('wamid')
    .execute();
  const inserted = new Set(rows.map((r) => r.wamid));
  const stored: StoredMessage[] = [];
  for (const { index, m } of all) {
    // A wamid twice in one batch is stored once, by its first body.
    if (!inserted.delete(m.wamid)) continue;
    stored.push({
      index,
      waId: m.from,
      timestamp: m.timestamp,
      windowEnd: customerWindowEnd(m.timestamp, m.fromAd),
    });
  }
  return stored;
}

/**
 * Moves each chat with new customer messages forward (greatest of times) and reopens it; the
 * chats that were resolved, each with the first body that reopened it, logged as reopened.
 */
async function moveChatsForward(
  trx: Trx,
  stored: readonly StoredMessage[],
): Promise<Array<{ index: number; waId: string }>> {
  if (!stored.length) return [];
  const perChat = new Map<string, { index: number; last: number; windowEnd: number }>();
  for (const s of stored) {
    const c = perChat.get(s.waId);
    if (!c) perChat.set(s.waId, { index: s.index, last: s.timestamp, windowEnd: s.windowEnd });
    else {
      c.last = Math.max(c.last, s.timestamp);
      c.windowEnd = Math.max(c.windowEnd, s.windowEnd);
    }
  }
  const rows = [...perChat].sort(([a], [b]) => (a < b ? -1 : 1));
  const updated = await sql<{ wa_id: string; was_resolved: boolean }>`
    with v (wa_id, last_at, window_end) as (
      values ${values(rows.map(([w, c]) => sql`(${w}::text, ${c.last}::bigint, ${c.windowEnd}::bigint)`))}
    ),
    old as (
      select chats.wa_id, chats.resolved from chats join v using (wa_id) order by chats.wa_id for update of chats
    )
    update chats set
      last_message_at = greatest(chats.last_message_at, v.last_at),
      last_customer_message_at = greatest(coalesce(chats.last_customer_message_at, 0), v.last_at),
      customer_window_expires_at = greatest(coalesce(chats.customer_window_expires_at, 0), v.window_end),
      resolved = false
    from v join old using (wa_id)
    where chats.wa_id = v.wa_id
    returning chats.wa_id, old.resolved as was_resolved`.execute(trx);
  const reopened = updated.rows.filter((r) => r.was_resolved).map((r) => r.wa_id);
  for (const waId of reopened)
    await insertAuditEntry(trx, chatAuditEntry(null, 'chat.reopened', waId, { reason: 'customer_message' }));
  return reopened.map((waId) => ({ index: perChat.get(waId)?.index ?? -1, waId }));
}

/** Inserts the statuses; for each new one, the index of the first body that carried it. */
async function insertStatuses(trx: Trx, fresh: readonly Fresh[]): Promise<number[]> {
  const all = fresh.flatMap((f) => f.parsed.statuses.map((s) => ({ index: f.index, s })));
  if (!all.length) return [];
  const rows = await trx
    .insertInto('message_statuses')
    .values(
      all.map(({ s }) => ({
        wamid: s.wamid,
        status: s.status,
        timestamp: s.timestamp,
        errors: s.errors ? JSON.stringify(s.errors) : null,
      })),
    )
    .onConflict((oc) => oc.columns(['wamid', 'status']).doNothing())
    .returning(['wamid', 'status'])
    .execute();
  const inserted = new Set(rows.map((r) => `${r.status} ${r.wamid}`));
  return all.flatMap(({ index, s }) => (inserted.delete(`${s.status} ${s.wamid}`) ? [index] : []));
}

/** The network's conversation expiry, greatest of times, per customer. */
async function moveNetworkWindows(trx: Trx, fresh: readonly Fresh[]): Promise<void> {
  const perChat = new Map<string, number>();
  for (const f of fresh)
    for (const s of f.parsed.statuses)
      if (s.conversationExpiresAt !== undefined)
        perChat.set(s.recipient, Math.max(perChat.get(s.recipient) ?? 0, s.conversationExpiresAt));
  if (!perChat.size) return;
  const rows = [...perChat].sort(([a], [b]) => (a < b ? -1 : 1));
  await sql`
    update chats set network_window_expires_at = greatest(coalesce(chats.network_window_expires_at, 0), v.expires_at)
    from (values ${values(rows.map(([w, t]) => sql`(${w}::text, ${t}::bigint)`))}) as v (wa_id, expires_at)
    where chats.wa_id = v.wa_id`.execute(trx);
}
