import { pageRows } from '@switchboard/kit';
import type { Kysely, Transaction } from 'kysely';
import type { GatewayDatabase } from './db.ts';

type Db = Kysely<GatewayDatabase> | Transaction<GatewayDatabase>;

export interface GroupRow {
  id: number;
  name: string;
}

export async function findGroup(db: Db, id: number): Promise<GroupRow | undefined> {
  return db.selectFrom('groups').select(['id', 'name']).where('id', '=', id).executeTakeFirst();
}

/** A page of groups by name, and how many there are. */
export async function listGroups(
  db: Db,
  limit: number,
  offset: number,
): Promise<{ count: number; results: GroupRow[] }> {
  const { count, rows } = await pageRows(db.selectFrom('groups'), { limit, offset }, (q) =>
    q.select(['id', 'name']).orderBy('name'),
  );
  return { count, results: rows };
}

export async function insertGroup(db: Db, name: string): Promise<GroupRow> {
  return db.insertInto('groups').values({ name }).returning(['id', 'name']).executeTakeFirstOrThrow();
}

export async function renameGroup(db: Db, id: number, name: string): Promise<void> {
  await db.updateTable('groups').set({ name }).where('id', '=', id).execute();
}

export async function deleteGroup(db: Db, id: number): Promise<void> {
  await db.deleteFrom('groups').where('id', '=', id).execute();
}

/** The groups with these ids (each once); unknown ids are skipped. */
export async function groupsByIds(db: Db, ids: readonly number[]): Promise<GroupRow[]> {
  const unique = [...new Set(ids)];
  if (!unique.length) return [];
  return db.selectFrom('groups').select(['id', 'name']).where('id', 'in', unique).execute();
}
