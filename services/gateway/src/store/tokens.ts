import { type Insertable, type Kysely, sql, type Transaction } from 'kysely';
import type { GatewayDatabase, RefreshTokensTable } from './db.ts';

type Db = Kysely<GatewayDatabase> | Transaction<GatewayDatabase>;

/** The user's stored (encrypted) Auth Token, if any. */
export async function findAuthToken(db: Db, userId: number): Promise<Buffer | undefined> {
  const row = await db
    .selectFrom('auth_tokens')
    .select('token_encrypted')
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return row?.token_encrypted;
}

/** The user's stored (encrypted) Auth Token, which must exist. */
export async function storedAuthToken(db: Db, userId: number): Promise<Buffer> {
  const row = await db
    .selectFrom('auth_tokens')
    .select('token_encrypted')
    .where('user_id', '=', userId)
    .executeTakeFirstOrThrow();
  return row.token_encrypted;
}

/** Stores the user's Auth Token unless they have one already (a concurrent request won). */
export async function insertAuthTokenIfNone(
  db: Db,
  token: { user_id: number; token_hash: Buffer; token_encrypted: Buffer },
): Promise<void> {
  await db
    .insertInto('auth_tokens')
    .values(token)
    .onConflict((oc) => oc.column('user_id').doNothing())
    .execute();
}

/** One round trip: the active user holding the token with this hash, and their group ids. */
export async function activeUserByTokenHash(db: Db, hash: Buffer) {
  return db
    .selectFrom('auth_tokens')
    .innerJoin('users', 'users.id', 'auth_tokens.user_id')
    .selectAll('users')
    .select(
      sql<number[]>`array(select group_id from user_groups where user_id = users.id order by group_id)`.as(
        'group_ids',
      ),
    )
    .where('auth_tokens.token_hash', '=', hash)
    .where('users.is_active', '=', true)
    .executeTakeFirst();
}

export async function deleteAuthToken(db: Db, userId: number): Promise<void> {
  await db.deleteFrom('auth_tokens').where('user_id', '=', userId).execute();
}

export async function insertRefreshToken(db: Db, values: Insertable<RefreshTokensTable>): Promise<void> {
  await db.insertInto('refresh_tokens').values(values).execute();
}

/** The refresh token with this hash and its user, locked for the conversion's transaction. */
export async function lockRefreshToken(trx: Transaction<GatewayDatabase>, hash: Buffer) {
  return trx
    .selectFrom('refresh_tokens')
    .innerJoin('users', 'users.id', 'refresh_tokens.user_id')
    .select([
      'refresh_tokens.id',
      'refresh_tokens.user_id',
      'refresh_tokens.purpose',
      'refresh_tokens.expires_at',
      'refresh_tokens.used_at',
      'users.role',
      'users.is_active',
    ])
    .where('refresh_tokens.token_hash', '=', hash)
    .forUpdate('refresh_tokens')
    .executeTakeFirst();
}

export async function markRefreshTokenUsed(db: Db, id: number): Promise<void> {
  await db.updateTable('refresh_tokens').set({ used_at: new Date() }).where('id', '=', id).execute();
}
