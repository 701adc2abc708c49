import { pageRows } from '@switchboard/kit';
import {
  type Insertable,
  type Kysely,
  type Selectable,
  sql,
  type Transaction,
  type Updateable,
} from 'kysely';
import { SEAT_ROLES } from '../domain/seats.ts';
import type { GatewayDatabase, UsersTable } from './db.ts';

type Db = Kysely<GatewayDatabase> | Transaction<GatewayDatabase>;

/** The groups of each user, by name. */
export async function groupsOf(db: Db, userIds: number[]) {
  if (!userIds.length) return new Map<number, Array<{ id: number; name: string }>>();
  const rows = await db
    .selectFrom('user_groups')
    .innerJoin('groups', 'groups.id', 'user_groups.group_id')
    .select(['user_groups.user_id', 'groups.id', 'groups.name'])
    .where('user_groups.user_id', 'in', userIds)
    .orderBy('groups.name')
    .execute();
  const map = new Map<number, Array<{ id: number; name: string }>>();
  for (const r of rows) {
    const list = map.get(r.user_id) ?? [];
    list.push({ id: r.id, name: r.name });
    map.set(r.user_id, list);
  }
  return map;
}

/**
 * Takes the seats' transaction-scoped advisory lock, then counts the seats taken (active users
 * of SEAT_ROLES), `exceptUserId` not counted. Seat-taking changes are serialised by the lock.
 */
export async function lockAndCountSeatsTaken(
  trx: Transaction<GatewayDatabase>,
  exceptUserId?: number,
): Promise<number> {
  await sql`select pg_advisory_xact_lock(hashtext('switchboard:seats'))`.execute(trx);
  let q = trx
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('is_active', '=', true)
    .where('role', 'in', [...SEAT_ROLES]);
  if (exceptUserId !== undefined) q = q.where('id', '<>', exceptUserId);
  const { n } = await q.executeTakeFirstOrThrow();
  return Number(n);
}

/** The ids among `ids` that name no group. */
export async function unknownGroupIds(db: Db, ids: number[]): Promise<number[]> {
  if (!ids.length) return [];
  const wanted = [...new Set(ids)];
  // One array parameter, not one parameter per id: the protocol counts parameters in 16 bits.
  const found = await db
    .selectFrom('groups')
    .select('id')
    .where(sql<boolean>`id = any(${wanted}::int[])`)
    .execute();
  const known = new Set(found.map((g) => g.id));
  return wanted.filter((id) => !known.has(id));
}

export type UserRow = Selectable<UsersTable>;

export async function findUser(db: Db, id: number): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

/** A page of users by id, and how many there are. */
export async function listUsers(
  db: Db,
  limit: number,
  offset: number,
): Promise<{ count: number; rows: UserRow[] }> {
  return pageRows(db.selectFrom('users'), { limit, offset }, (q) => q.selectAll().orderBy('id'));
}

/** The users with these ids (each once); unknown ids are skipped. */
export async function usersByIds(db: Db, ids: readonly number[]): Promise<UserRow[]> {
  const unique = [...new Set(ids)];
  if (!unique.length) return [];
  return db.selectFrom('users').selectAll().where('id', 'in', unique).execute();
}

export async function insertUser(db: Db, values: Insertable<UsersTable>): Promise<number> {
  const row = await db.insertInto('users').values(values).returning('id').executeTakeFirstOrThrow();
  return row.id;
}

export async function updateUser(db: Db, id: number, set: Updateable<UsersTable>): Promise<void> {
  await db.updateTable('users').set(set).where('id', '=', id).execute();
}

/** Adds the user to these groups (each once). */
export async function addUserGroups(db: Db, userId: number, groupIds: readonly number[]): Promise<void> {
  if (!groupIds.length) return;
  await db
    .insertInto('user_groups')
    .values([...new Set(groupIds)].map((group_id) => ({ user_id: userId, group_id })))
    .execute();
}

/** The user's groups become exactly these. */
export async function replaceUserGroups(db: Db, userId: number, groupIds: readonly number[]): Promise<void> {
  await db.deleteFrom('user_groups').where('user_id', '=', userId).execute();
  await addUserGroups(db, userId, groupIds);
}

/** Ends every session of the user: the Auth Token and every refresh token or password-less link. */
export async function endSessions(db: Db, userId: number): Promise<void> {
  await db.deleteFrom('auth_tokens').where('user_id', '=', userId).execute();
  await db.deleteFrom('refresh_tokens').where('user_id', '=', userId).execute();
}

/** Sign-in: the user with this username, whatever its case. */
export async function findCredentials(db: Db, username: string) {
  return db
    .selectFrom('users')
    .select(['id', 'password_hash', 'is_active', 'role'])
    .where(sql<string>`lower(username)`, '=', username.toLowerCase())
    .executeTakeFirst();
}

/** Password-less sign-in: the oldest active user (not the configurator) with this e-mail, whatever its case. */
export async function findMailableUser(db: Db, email: string) {
  return db
    .selectFrom('users')
    .select(['id', 'username'])
    .where(sql<string>`lower(email)`, '=', email.toLowerCase())
    .where('is_active', '=', true)
    .where('role', '<>', 'configurator')
    .orderBy('id')
    .executeTakeFirst();
}

export async function adminExists(db: Db): Promise<boolean> {
  const row = await db.selectFrom('users').select('id').where('role', '=', 'admin').executeTakeFirst();
  return row !== undefined;
}

/** Creates the configurator (no password) unless a user with this username, whatever its case, exists. */
export async function insertConfiguratorIfMissing(db: Db, username: string): Promise<void> {
  await db
    .insertInto('users')
    .values({ username, role: 'configurator', password_hash: null })
    .onConflict((oc) => oc.expression(sql`lower(username)`).doNothing())
    .execute();
}

/** The user with this username, whatever its case, which must exist. */
export async function userByUsername(db: Db, username: string) {
  return db
    .selectFrom('users')
    .select(['id', 'username', 'role'])
    .where(sql<string>`lower(username)`, '=', username.toLowerCase())
    .executeTakeFirstOrThrow();
}
