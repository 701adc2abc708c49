import { pageRows } from '@switchboard/kit';
import type { Principal, TaggingFiltersSchema, TaggingTarget } from '@switchboard/proto';
import { type Kysely, type Selectable, sql, type Transaction } from 'kysely';
import type { z } from 'zod';
import type { ChatsDatabase, ChatTaggingsTable, MessageTaggingsTable, TaggingEventsTable } from '../db.ts';
import { assignedToCaller } from './chats.ts';

type Db = Kysely<ChatsDatabase>;
type Writer = Kysely<ChatsDatabase> | Transaction<ChatsDatabase>;
export type ChatTaggingRow = Selectable<ChatTaggingsTable>;
export type MessageTaggingRow = Selectable<MessageTaggingsTable>;
export type TaggingEventRow = Selectable<TaggingEventsTable>;
type Page = { limit: number; offset: number };

export async function insertChatTagging(
  db: Writer,
  t: { wa_id: string; tag_id: number; created_by: number },
): Promise<ChatTaggingRow | undefined> {
  return db
    .insertInto('chat_taggings')
    .values(t)
    .onConflict((oc) => oc.columns(['wa_id', 'tag_id']).doNothing())
    .returningAll()
    .executeTakeFirst();
}

export async function insertMessageTagging(
  db: Writer,
  t: { message_id: string; wa_id: string; tag_id: number; created_by: number },
): Promise<MessageTaggingRow | undefined> {
  return db
    .insertInto('message_taggings')
    .values(t)
    .onConflict((oc) => oc.columns(['message_id', 'tag_id']).doNothing())
    .returningAll()
    .executeTakeFirst();
}

export async function findChatTagging(db: Writer, id: number): Promise<ChatTaggingRow | undefined> {
  return db.selectFrom('chat_taggings').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function findMessageTagging(db: Writer, id: number): Promise<MessageTaggingRow | undefined> {
  return db.selectFrom('message_taggings').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Deletes one tagging; false when it was gone already (a concurrent delete). */
export async function deleteTagging(db: Writer, target: TaggingTarget, id: number): Promise<boolean> {
  const table = target === 'chat' ? 'chat_taggings' : 'message_taggings';
  const res = await db.deleteFrom(table).where('id', '=', id).executeTakeFirst();
  return res.numDeletedRows > 0n;
}

export async function insertTaggingEvent(
  db: Writer,
  e: Omit<TaggingEventsTable, 'id' | 'created_at'>,
): Promise<void> {
  await db.insertInto('tagging_events').values(e).execute();
}

/** Every tagging of a tag (to record their removal when the tag goes). */
/**
 * Deletes a tag's taggings and answers those this statement deleted: a tagging removed by a
 * concurrent request is not answered again (its removal is already in the history).
 */
export async function removeTaggingsOfTag(
  db: Writer,
  tagId: number,
): Promise<{ chats: ChatTaggingRow[]; messages: MessageTaggingRow[] }> {
  const chats = await db.deleteFrom('chat_taggings').where('tag_id', '=', tagId).returningAll().execute();
  const messages = await db
    .deleteFrom('message_taggings')
    .where('tag_id', '=', tagId)
    .returningAll()
    .execute();
  return { chats, messages };
}

export async function pageChatTaggings(
  db: Db,
  p: Principal,
  f: { chat?: string | undefined; tag?: number | undefined },
  page: Page,
): Promise<{ count: number; rows: ChatTaggingRow[] }> {
  let q = db.selectFrom('chat_taggings as t').innerJoin('chats as c', 'c.wa_id', 't.wa_id');
  if (p.permissions.can_read_chats === 'assigned') q = q.where((eb) => assignedToCaller(eb, p));
  if (f.chat !== undefined) q = q.where('t.wa_id', '=', f.chat);
  if (f.tag !== undefined) q = q.where('t.tag_id', '=', f.tag);
  return pageRows(q, page, (q) => q.selectAll('t').orderBy('t.id', 'desc'));
}

export async function pageMessageTaggings(
  db: Db,
  p: Principal,
  f: { message?: string | undefined; tag?: number | undefined },
  page: Page,
): Promise<{ count: number; rows: MessageTaggingRow[] }> {
  let q = db.selectFrom('message_taggings as t').innerJoin('chats as c', 'c.wa_id', 't.wa_id');
  if (p.permissions.can_read_chats === 'assigned') q = q.where((eb) => assignedToCaller(eb, p));
  if (f.message !== undefined) q = q.where('t.message_id', '=', f.message);
  if (f.tag !== undefined) q = q.where('t.tag_id', '=', f.tag);
  return pageRows(q, page, (q) => q.selectAll('t').orderBy('t.id', 'desc'));
}

/** Tagging history of chats or messages the caller may read, newest first. */
export async function pageTaggingEvents(
  db: Db,
  p: Principal,
  target: TaggingTarget,
  f: z.output<typeof TaggingFiltersSchema>,
  page: Page,
): Promise<{ count: number; rows: TaggingEventRow[] }> {
  let q = db
    .selectFrom('tagging_events as e')
    .innerJoin('chats as c', 'c.wa_id', 'e.wa_id')
    .where('e.target', '=', target);
  if (p.permissions.can_read_chats === 'assigned') q = q.where((eb) => assignedToCaller(eb, p));
  if (f.tag !== undefined) q = q.where('e.tag_id', '=', f.tag);
  if (f.chat !== undefined) q = q.where('e.wa_id', '=', f.chat);
  if (f.message !== undefined) q = q.where('e.message_id', '=', f.message);
  if (f.user !== undefined) q = q.where('e.user_id', '=', f.user);
  if (f.since !== undefined) q = q.where(sql<boolean>`e.created_at >= to_timestamp(${f.since})`);
  if (f.until !== undefined) q = q.where(sql<boolean>`e.created_at < to_timestamp(${f.until})`);
  const { n } = await q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  const rows = await q
    .selectAll('e')
    .orderBy('e.created_at', 'desc')
    .orderBy('e.id', 'desc')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
  return { count: Number(n), rows };
}
