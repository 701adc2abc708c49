import type { Principal } from '@switchboard/proto';
import { ServiceError } from '@switchboard/proto';
import { type Kysely, sql } from 'kysely';
import type { GatewayDatabase } from './db.ts';
import { newAuthToken, newRefreshToken, type TokenBox, tokenHash } from './secrets.ts';
import { toPrincipal } from './users.ts';

export interface TokensDeps {
  db: Kysely<GatewayDatabase>;
  box: TokenBox;
  refreshTtlSeconds: number;
  passwordlessTtlSeconds: number;
}

export function createTokens(deps: TokensDeps) {
  const { db, box } = deps;

  /** Spec rule 3: a token is created only when the user has none; otherwise the same one is returned. */
  async function authTokenFor(userId: number): Promise<string> {
    const existing = await db
      .selectFrom('auth_tokens')
      .select('token_encrypted')
      .where('user_id', '=', userId)
      .executeTakeFirst();
    if (existing) return box.open(existing.token_encrypted);
    const token = newAuthToken();
    await db
      .insertInto('auth_tokens')
      .values({ user_id: userId, token_hash: tokenHash(token), token_encrypted: box.seal(token) })
      .onConflict((oc) => oc.column('user_id').doNothing())
      .execute();
    // A concurrent request may have won the insert: whatever is stored now is the token.
    const stored = await db
      .selectFrom('auth_tokens')
      .select('token_encrypted')
      .where('user_id', '=', userId)
      .executeTakeFirstOrThrow();
    return box.open(stored.token_encrypted);
  }

  /** One round trip per request: the user and their group ids together. */
  async function principalForToken(token: string): Promise<Principal | null> {
    const user = await db
      .selectFrom('auth_tokens')
      .innerJoin('users', 'users.id', 'auth_tokens.user_id')
      .selectAll('users')
      .select(
        sql<number[]>`array(select group_id from user_groups where user_id = users.id order by group_id)`.as(
          'group_ids',
        ),
      )
      .where('auth_tokens.token_hash', '=', tokenHash(token))
      .where('users.is_active', '=', true)
      .executeTakeFirst();
    if (!user) return null;
    const { group_ids, ...row } = user;
    return toPrincipal(row, group_ids);
  }

  async function revokeAuthToken(userId: number): Promise<void> {
    await db.deleteFrom('auth_tokens').where('user_id', '=', userId).execute();
  }

  async function issueRefreshToken(userId: number, purpose: 'refresh' | 'passwordless'): Promise<string> {
    const token = newRefreshToken();
    const ttl = purpose === 'refresh' ? deps.refreshTtlSeconds : deps.passwordlessTtlSeconds;
    await db
      .insertInto('refresh_tokens')
      .values({
        user_id: userId,
        token_hash: tokenHash(token),
        purpose,
        expires_at: new Date(Date.now() + ttl * 1000),
        used_at: null,
      })
      .execute();
    return token;
  }

  /**
   * Spec rule 1: converting resets the refresh token unless `keep` is true; the replacement
   * is returned beside the auth token. A password-less link works once whatever `keep` says.
   */
  async function convertRefreshToken(
    refreshToken: string,
    keep: boolean,
  ): Promise<{ token: string; refresh_token?: string }> {
    const invalid = () =>
      new ServiceError('invalid_refresh_token', 'The refresh token is invalid, used or expired.');
    const result = await db.transaction().execute(async (trx) => {
      const row = await trx
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
        .where('refresh_tokens.token_hash', '=', tokenHash(refreshToken))
        .forUpdate('refresh_tokens')
        .executeTakeFirst();
      if (!row || row.used_at !== null || row.expires_at.getTime() <= Date.now() || !row.is_active)
        throw invalid();
      if (row.role === 'configurator') {
        throw new ServiceError(
          'configurator_not_allowed',
          'The configurator user cannot sign in with a refresh token.',
        );
      }
      const consume = !keep || row.purpose === 'passwordless';
      if (consume) {
        await trx
          .updateTable('refresh_tokens')
          .set({ used_at: new Date() })
          .where('id', '=', row.id)
          .execute();
      }
      return { userId: row.user_id, rotate: consume && row.purpose === 'refresh' };
    });
    const token = await authTokenFor(result.userId);
    if (!result.rotate) return { token };
    return { token, refresh_token: await issueRefreshToken(result.userId, 'refresh') };
  }

  return { authTokenFor, principalForToken, revokeAuthToken, issueRefreshToken, convertRefreshToken };
}

export type Tokens = ReturnType<typeof createTokens>;
