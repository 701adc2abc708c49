import { pageRows } from '@switchboard/kit';
import type { Tag } from '@switchboard/proto';
import type { Kysely, Selectable, Transaction } from 'kysely';
import type { ChatsDatabase, TagsTable } from '../db.ts';
import { containsPattern } from '../domain/search.ts';

type Db = Kysely<ChatsDatabase>;
type Writer = Kysely<ChatsDatabase> | Transaction<ChatsDatabase>;
export type TagRow = Selectable<TagsTable>;

export function tagOf(row: TagRow, taggingId: number | null = null): Tag {
  return {
    id: row.id,
    name: row.name,
    web_inbox_color: row.web_inbox_color,
    extra: row.extra ?? null,
    tagging_id: taggingId,
  };
}

/** `extra` as jsonb text: absent and null both store null. */
export function extraText(extra: unknown): string | null {
  return extra === undefined || extra === null ? null : JSON.stringify(extra);
}

export async function pageTags(
  db: Db,
  r: { search?: string | undefined; limit: number; offset: number },
): Promise<{ count: number; rows: TagRow[] }> {
  let q = db.selectFrom('tags');
  if (r.search) q = q.where('name', 'ilike', containsPattern(r.search));
  return pageRows(q, r, (q) => q.selectAll().orderBy('name').orderBy('id'));
}

export async function findTag(db: Writer, id: number): Promise<TagRow | undefined> {
  return db.selectFrom('tags').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function insertTag(
  db: Writer,
  t: { name: string; web_inbox_color: string; extra?: unknown },
): Promise<TagRow> {
  return db
    .insertInto('tags')
    .values({ name: t.name, web_inbox_color: t.web_inbox_color, extra: extraText(t.extra) })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function updateTagRow(
  db: Writer,
  id: number,
  c: { name?: string | undefined; web_inbox_color?: string | undefined; extra?: unknown },
): Promise<TagRow | undefined> {
  return db
    .updateTable('tags')
    .set({
      ...(c.name !== undefined && { name: c.name }),
      ...(c.web_inbox_color !== undefined && { web_inbox_color: c.web_inbox_color }),
      ...('extra' in c && { extra: extraText(c.extra) }),
      updated_at: new Date(),
    })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

export async function deleteTagRow(db: Writer, id: number): Promise<void> {
  await db.deleteFrom('tags').where('id', '=', id).execute();
}

/** Tags, each with the tagging that attached it, by what they are attached to (in tagging order). */
function tagsByOwner<R extends TagRow & { tagging_id: number }>(
  rows: readonly R[],
  ownerOf: (row: R) => string,
): Map<string, Tag[]> {
  const map = new Map<string, Tag[]>();
  for (const row of rows) {
    const list = map.get(ownerOf(row)) ?? [];
    list.push(tagOf(row, row.tagging_id));
    map.set(ownerOf(row), list);
  }
  return map;
}

/** The tags of chats, by wa_id, each with the tagging that attached it. */
export async function chatTagsOf(db: Db, waIds: readonly string[]): Promise<Map<string, Tag[]>> {
  if (!waIds.length) return new Map();
  const rows = await db
    .selectFrom('chat_taggings as ct')
    .innerJoin('tags as t', 't.id', 'ct.tag_id')
    .selectAll('t')
    .select(['ct.wa_id', 'ct.id as tagging_id'])
    .where('ct.wa_id', 'in', [...waIds])
    .orderBy('ct.id')
    .execute();
  return tagsByOwner(rows, (r) => r.wa_id);
}

/** The tags of messages, by message id, each with the tagging that attached it. */
export async function messageTagsOf(db: Db, messageIds: readonly string[]): Promise<Map<string, Tag[]>> {
  if (!messageIds.length) return new Map();
  const rows = await db
    .selectFrom('message_taggings as mt')
    .innerJoin('tags as t', 't.id', 'mt.tag_id')
    .selectAll('t')
    .select(['mt.message_id', 'mt.id as tagging_id'])
    .where('mt.message_id', 'in', [...messageIds])
    .orderBy('mt.id')
    .execute();
  return tagsByOwner(rows, (r) => r.message_id);
}
