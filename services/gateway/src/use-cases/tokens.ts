import type { Principal } from '@switchboard/proto';
import type { Kysely } from 'kysely';
import type { PrincipalCache } from '../adapters/principal-cache.ts';
import { newAuthToken, newRefreshToken, type TokenBox, tokenHash } from '../adapters/secrets.ts';
import {
  assertRefreshUsable,
  type RefreshPurpose,
  refreshDecision,
  refreshTtlSeconds,
} from '../domain/tokens.ts';
import type { GatewayDatabase } from '../store/db.ts';
import {
  activeUserByTokenHash,
  deleteAuthToken,
  findAuthToken,
  insertAuthTokenIfNone,
  insertRefreshToken,
  lockRefreshToken,
  markRefreshTokenUsed,
  storedAuthToken,
} from '../store/tokens.ts';
import { toPrincipal } from './users.ts';

export interface TokensDeps {
  db: Kysely<GatewayDatabase>;
  box: TokenBox;
  refreshTtlSeconds: number;
  passwordlessTtlSeconds: number;
  /** Token → principal between rights changes; none: every request reads the database. */
  principals?: PrincipalCache;
  tokenRevoked?: (userId: number) => Promise<void>;
}

export function createTokens(deps: TokensDeps) {
  const { db, box } = deps;

  /** Spec rule 3: a token is created only when the user has none; otherwise the same one is returned. */
  async function authTokenFor(userId: number): Promise<string> {
    const existing = await findAuthToken(db, userId);
    if (existing) return box.open(existing);
    const token = newAuthToken();
    await insertAuthTokenIfNone(db, {
      user_id: userId,
      token_hash: tokenHash(token),
      token_encrypted: box.seal(token),
    });
    // A concurrent request may have won the insert: whatever is stored now is the token.
    return box.open(await storedAuthToken(db, userId));
  }

  /** One round trip per request: the user and their group ids together. */
  async function principalForToken(token: string): Promise<Principal | null> {
    const hash = tokenHash(token);
    const key = hash.toString('base64');
    const cached = deps.principals?.get(key);
    if (cached) return cached;
    const readAt = deps.principals?.generation() ?? 0;
    const user = await activeUserByTokenHash(db, hash);
    if (!user) return null;
    const { group_ids, ...row } = user;
    const principal = toPrincipal(row, group_ids);
    deps.principals?.set(key, principal, readAt);
    return principal;
  }

  async function revokeAuthToken(userId: number): Promise<void> {
    await deleteAuthToken(db, userId);
    await deps.tokenRevoked?.(userId);
  }

  async function issueRefreshToken(userId: number, purpose: RefreshPurpose): Promise<string> {
    const token = newRefreshToken();
    const ttl = refreshTtlSeconds(purpose, deps);
    await insertRefreshToken(db, {
      user_id: userId,
      token_hash: tokenHash(token),
      purpose,
      expires_at: new Date(Date.now() + ttl * 1000),
      used_at: null,
    });
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
    const result = await db.transaction().execute(async (trx) => {
      const row = await lockRefreshToken(trx, tokenHash(refreshToken));
      assertRefreshUsable(row, Date.now());
      const { consume, rotate } = refreshDecision(row.purpose, keep);
      if (consume) await markRefreshTokenUsed(trx, row.id);
      return { userId: row.user_id, rotate };
    });
    const token = await authTokenFor(result.userId);
    if (!result.rotate) return { token };
    return { token, refresh_token: await issueRefreshToken(result.userId, 'refresh') };
  }

  return { authTokenFor, principalForToken, revokeAuthToken, issueRefreshToken, convertRefreshToken };
}

export type Tokens = ReturnType<typeof createTokens>;
