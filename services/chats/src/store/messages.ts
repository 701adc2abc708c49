import { type Kysely, type Selectable, sql } from 'kysely';
import type { ChatsDatabase, MessagesTable } from '../db.ts';
import { businessWindowEnd } from '../domain/window.ts';
import { ensureChat } from './chats.ts';

type Db = Kysely<ChatsDatabase>;

/** Most messages of one second a page takes when the whole page is that second. */
const SAME_SECOND_MAX = 1000;

/**
 * A page of one chat's messages that never ends inside one second: the cursors are seconds
 * (`before_time`/`since_time`), so a page ending between two messages of the same second would
 * make the next page skip the rest of that second. Such a page ends before that second instead,
 * or, when the whole page is that one second, takes all of it (up to `SAME_SECOND_MAX`).
 * `since_time` alone pages forward: the oldest messages newer than it. Newest first either way.
 */
export async function messagePage(
  db: Db,
  r: { wa_id: string; before_time?: number | undefined; since_time?: number | undefined; limit: number },
): Promise<Selectable<MessagesTable>[]> {
  const forward = r.since_time !== undefined && r.before_time === undefined;
  const dir = forward ? 'asc' : 'desc';
  let q = db.selectFrom('messages').selectAll().where('wa_id', '=', r.wa_id);
  if (r.before_time !== undefined) q = q.where('timestamp', '<', r.before_time);
  if (r.since_time !== undefined) q = q.where('timestamp', '>', r.since_time);
  const ordered = (query: typeof q) =>
    query.orderBy('timestamp', dir).orderBy('created_at', dir).orderBy('id', dir);
  const rows = await ordered(q)
    .limit(r.limit + 1)
    .execute();
  let page = rows.slice(0, r.limit);
  const last = page.at(-1);
  if (rows.length > r.limit && last && rows[r.limit]?.timestamp === last.timestamp) {
    const before = page.filter((m) => m.timestamp !== last.timestamp);
    page = before.length
      ? before
      : await ordered(q.where('timestamp', '=', last.timestamp))
          .limit(SAME_SECOND_MAX)
          .execute();
  }
  return forward ? page.reverse() : page;
}

/** Whether a chat has any message older than `timestamp`. */
export async function hasMessageBefore(db: Db, waId: string, timestamp: number): Promise<boolean> {
  const older = await db
    .selectFrom('messages')
    .select('id')
    .where('wa_id', '=', waId)
    .where('timestamp', '<', timestamp)
    .limit(1)
    .executeTakeFirst();
  return Boolean(older);
}

/** A message by its wamid, or also by its own id when `id` is a UUID. */
export async function findMessageByIdOrWamid(
  db: Db,
  id: string,
  isUuid: boolean,
): Promise<Selectable<MessagesTable> | undefined> {
  return db
    .selectFrom('messages')
    .selectAll()
    .where((eb) => (isUuid ? eb.or([eb('id', '=', id), eb('wamid', '=', id)]) : eb('wamid', '=', id)))
    .executeTakeFirst();
}

/** A message by its id, which must exist. */
export async function getMessageRow(db: Db, id: string): Promise<Selectable<MessagesTable>> {
  return db.selectFrom('messages').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

/** The message a user already sent with this Idempotency-Key, if any. */
export async function findSendByIdempotencyKey(db: Db, userId: number, idempotencyKey: string) {
  return db
    .selectFrom('messages')
    .select(['id', 'send_state', 'request_hash'])
    .where('sender_user_id', '=', userId)
    .where('idempotency_key', '=', idempotencyKey)
    .executeTakeFirst();
}

export interface QueuedMessage {
  id: string;
  waId: string;
  type: string;
  wabaPayload: unknown;
  senderUserId: number;
  timestamp: number;
  idempotencyKey: string | null;
  requestHash: string;
}

/**
 * Stores an outbound message as queued, creating its person and chat if needed and moving the
 * chat's last activity (and, for a template, the business window) forward, in one transaction.
 */
export async function insertQueuedMessage(db: Db, m: QueuedMessage): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await ensureChat(trx, m.waId);
    await trx
      .insertInto('messages')
      .values({
        id: m.id,
        wamid: null,
        wa_id: m.waId,
        from_us: true,
        type: m.type,
        waba_payload: JSON.stringify(m.wabaPayload),
        sender_user_id: m.senderUserId,
        timestamp: m.timestamp,
        send_state: 'queued',
        idempotency_key: m.idempotencyKey,
        request_hash: m.requestHash,
      })
      .execute();
    await trx
      .updateTable('chats')
      .set({
        last_message_at: sql<number>`greatest(last_message_at, ${m.timestamp})`,
        ...(m.type === 'template' && {
          business_window_expires_at: sql<number>`greatest(coalesce(business_window_expires_at, 0), ${businessWindowEnd(m.timestamp)})`,
        }),
      })
      .where('wa_id', '=', m.waId)
      .execute();
  });
}

/**
 * Ids of sends at the head of their customer's queue, never taken by a worker, stored more than
 * `olderThanSeconds` ago. Only heads: a later send waits for its head on purpose, and the worker
 * that sends the head sends it next; a head being retried has its command and schedule already.
 */
export async function queuedMessageIdsOlderThan(db: Db, olderThanSeconds: number): Promise<string[]> {
  const result = await sql<{ id: string }>`
    select id from (
      select distinct on (wa_id) id, send_attempts, created_at from messages
      where send_state = 'queued'
      order by wa_id, send_seq) head
    where send_attempts = 0 and created_at < now() - make_interval(secs => ${olderThanSeconds})`.execute(db);
  return result.rows.map((r) => r.id);
}
