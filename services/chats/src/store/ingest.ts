import { randomUUID } from 'node:crypto';
import { type Kysely, sql, type Transaction } from 'kysely';
import type { ChatsDatabase } from '../db.ts';
import type { ParsedBody } from '../domain/network-body.ts';
import { customerWindowEnd } from '../domain/window.ts';
import { chatAuditEntry, insertAuditEntry } from './audit.ts';
import { ensureChat, newChat } from './chats.ts';

export interface IngestResult {
  storedMessages: number;
  storedStatuses: number;
  /** Resolved chats a new customer message reopened. */
  reopened: string[];
}

/**
 * Stores one network webhook body in one transaction. Every write is idempotent (wamid and
 * (wamid, status) are unique) and every chat update is commutative (greatest of times), so
 * redeliveries and bodies processed out of order converge on the same state.
 */
export interface RawWebhook {
  streamSeq: number;
  receivedAt: number;
  signatureVerified: boolean;
  /** The body exactly as received. */
  body: string;
  /** The body as `jsonb` can hold it (`storableJsonText`); null when it is not JSON. */
  storableJson: string | null;
}

export interface StoreOptions {
  /**
   * Test hook (`CHATS_TEST_FAIL_WA_IDS`, off by default): a body naming one of these wa_ids
   * fails inside its transaction with the mapped SQLSTATE, raised by PostgreSQL itself.
   */
  failFor?: ReadonlyMap<string, string> | undefined;
}

const SQLSTATE = /^[0-9A-Z]{5}$/;

async function failForTest(
  trx: Transaction<ChatsDatabase>,
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

/**
 * Keeps the body as received and folds it into persons, chats, messages and statuses in one
 * transaction. When the body's stream sequence is already stored, the whole fold committed
 * before (a redelivery after a crash) and nothing is written again. `parsed` must come from
 * the storable JSON text, so every string it holds fits a `text` column.
 */
export async function storeNetworkWebhook(
  db: Kysely<ChatsDatabase>,
  raw: RawWebhook,
  parsed: ParsedBody | null,
  opts: StoreOptions = {},
): Promise<IngestResult | 'already_stored'> {
  return db.transaction().execute(async (trx) => {
    const kept = await trx
      .insertInto('network_webhooks')
      .values({
        stream_seq: raw.streamSeq,
        received_at: new Date(raw.receivedAt),
        signature_verified: raw.signatureVerified,
        body: raw.storableJson,
        body_raw: Buffer.from(raw.body, 'utf8'),
      })
      .onConflict((oc) => oc.column('stream_seq').doNothing())
      .returning('id')
      .executeTakeFirst();
    if (!kept) return 'already_stored';
    if (parsed && opts.failFor?.size) await failForTest(trx, parsed, opts.failFor);
    return parsed ? ingestNetworkBody(trx, parsed) : { storedMessages: 0, storedStatuses: 0, reopened: [] };
  });
}

export async function ingestNetworkBody(
  db: Kysely<ChatsDatabase> | Transaction<ChatsDatabase>,
  body: ParsedBody,
): Promise<IngestResult> {
  const run = async (trx: Kysely<ChatsDatabase> | Transaction<ChatsDatabase>) => {
    const result: IngestResult = { storedMessages: 0, storedStatuses: 0, reopened: [] };
    for (const c of body.contacts) {
      await trx
        .insertInto('persons')
        .values({ wa_id: c.wa_id, profile_name: c.name })
        .onConflict((oc) =>
          oc.column('wa_id').doUpdateSet({
            profile_name: (eb) =>
              eb.fn.coalesce(sql<string>`nullif(${c.name}, '')`, eb.ref('persons.profile_name')),
            updated_at: new Date(),
          }),
        )
        .execute();
    }
    const named = new Set(body.contacts.map((c) => c.wa_id));
    for (const m of body.messages) {
      if (named.has(m.from)) {
        await trx
          .insertInto('chats')
          .values(newChat(m.from))
          .onConflict((oc) => oc.column('wa_id').doNothing())
          .execute();
      } else {
        await ensureChat(trx, m.from);
      }
      const inserted = await trx
        .insertInto('messages')
        .values({
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
        })
        .onConflict((oc) => oc.column('wamid').doNothing())
        .returning('id')
        .executeTakeFirst();
      if (!inserted) continue;
      result.storedMessages++;
      const windowEnd = customerWindowEnd(m.timestamp, m.fromAd);
      // One statement: lock the row, remember whether it was resolved, update it.
      const updated = await sql<{ was_resolved: boolean }>`
        with old as (select wa_id, resolved from chats where wa_id = ${m.from} for update)
        update chats set
          last_message_at = greatest(chats.last_message_at, ${m.timestamp}),
          last_customer_message_at = greatest(coalesce(chats.last_customer_message_at, 0), ${m.timestamp}),
          customer_window_expires_at = greatest(coalesce(chats.customer_window_expires_at, 0), ${windowEnd}),
          resolved = false
        from old where chats.wa_id = old.wa_id
        returning old.resolved as was_resolved`.execute(trx);
      if (updated.rows[0]?.was_resolved) {
        result.reopened.push(m.from);
        await insertAuditEntry(
          trx,
          chatAuditEntry(null, 'chat.reopened', m.from, { reason: 'customer_message' }),
        );
      }
    }
    for (const s of body.statuses) {
      const stored = await trx
        .insertInto('message_statuses')
        .values({
          wamid: s.wamid,
          status: s.status,
          timestamp: s.timestamp,
          errors: s.errors ? JSON.stringify(s.errors) : null,
        })
        .onConflict((oc) => oc.columns(['wamid', 'status']).doNothing())
        .returning('wamid')
        .executeTakeFirst();
      if (stored) result.storedStatuses++;
      if (s.conversationExpiresAt !== undefined) {
        await trx
          .updateTable('chats')
          .set({
            network_window_expires_at: sql<number>`greatest(coalesce(network_window_expires_at, 0), ${s.conversationExpiresAt})`,
          })
          .where('wa_id', '=', s.recipient)
          .execute();
      }
    }
    return result;
  };
  // Inside a caller's transaction, or in one of its own.
  return db.isTransaction ? run(db) : db.transaction().execute(run);
}
