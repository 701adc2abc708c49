import { pageRows } from '@switchboard/kit';
import type { Kysely, Selectable, Transaction } from 'kysely';
import type { ChatsDatabase, SavedResponsesTable } from '../db.ts';
import { containsPattern } from '../domain/search.ts';

type Db = Kysely<ChatsDatabase>;
type Writer = Kysely<ChatsDatabase> | Transaction<ChatsDatabase>;
export type SavedResponseRow = Selectable<SavedResponsesTable>;

/** Saved responses whose name or text contains `search`, by name. */
export async function pageSavedResponses(
  db: Db,
  r: { search?: string | undefined; limit: number; offset: number },
): Promise<{ count: number; rows: SavedResponseRow[] }> {
  let q = db.selectFrom('saved_responses');
  if (r.search) {
    const like = containsPattern(r.search);
    q = q.where((eb) => eb.or([eb('name', 'ilike', like), eb('text', 'ilike', like)]));
  }
  return pageRows(q, r, (q) => q.selectAll().orderBy('name').orderBy('id'));
}

export async function findSavedResponse(db: Writer, id: number): Promise<SavedResponseRow | undefined> {
  return db.selectFrom('saved_responses').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function insertSavedResponse(
  db: Writer,
  r: { name: string; text: string; tags: string[]; created_by: number },
): Promise<SavedResponseRow> {
  return db.insertInto('saved_responses').values(r).returningAll().executeTakeFirstOrThrow();
}

export async function updateSavedResponseRow(
  db: Writer,
  id: number,
  c: { name?: string | undefined; text?: string | undefined; tags?: string[] | undefined },
): Promise<SavedResponseRow | undefined> {
  return db
    .updateTable('saved_responses')
    .set({
      ...(c.name !== undefined && { name: c.name }),
      ...(c.text !== undefined && { text: c.text }),
      ...(c.tags !== undefined && { tags: c.tags }),
      updated_at: new Date(),
    })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

export async function deleteSavedResponseRow(db: Writer, id: number): Promise<void> {
  await db.deleteFrom('saved_responses').where('id', '=', id).execute();
}
