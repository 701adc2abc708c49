import type { Principal } from '@switchboard/proto';

/**
 * Token → principal, so an authenticated request costs no database round trip (the profiles
 * of `bench:messaging` showed the token lookup as the gateway's only query per send). Entries
 * live `ttlMs` at most, which bounds how long a missed invalidation can matter; rights changes
 * drop the affected users' entries at once, in this process before the change is answered and
 * in every other gateway through `events.identity`.
 */
export interface PrincipalCache {
  get(tokenHash: string): Principal | undefined;
  /** Drops so far: read it before the database, hand it to `set`. */
  generation(): number;
  /**
   * Keeps a principal read from the database, unless users were dropped since `readAt` (that
   * read may predate a logout or a rights change and must not come back into the cache).
   */
  set(tokenHash: string, principal: Principal, readAt: number): void;
  /** `userIds` empty: anyone may be affected, drop everything. */
  dropUsers(userIds: readonly number[]): void;
}

interface Entry {
  principal: Principal;
  expiresAt: number;
}

export function createPrincipalCache(opts: {
  ttlMs: number;
  maxEntries?: number;
  now?: () => number;
}): PrincipalCache {
  const now = opts.now ?? Date.now;
  const maxEntries = opts.maxEntries ?? 10_000;
  const entries = new Map<string, Entry>();
  let drops = 0;
  return {
    generation: () => drops,
    get(tokenHash) {
      const e = entries.get(tokenHash);
      if (!e) return undefined;
      if (e.expiresAt <= now()) {
        entries.delete(tokenHash);
        return undefined;
      }
      return e.principal;
    },
    set(tokenHash, principal, readAt) {
      if (opts.ttlMs <= 0 || readAt !== drops) return;
      // Seats bound the number of tokens; the limit only guards against a flood of users.
      if (entries.size >= maxEntries) entries.clear();
      entries.set(tokenHash, { principal, expiresAt: now() + opts.ttlMs });
    },
    dropUsers(userIds) {
      drops++;
      if (!userIds.length) {
        entries.clear();
        return;
      }
      const ids = new Set(userIds);
      for (const [key, e] of entries) if (ids.has(e.principal.user_id)) entries.delete(key);
    },
  };
}
