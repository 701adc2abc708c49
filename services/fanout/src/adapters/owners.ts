import type { Logger } from '@switchboard/kit';
import { identityChanged, type Principal, principalLookup } from '@switchboard/proto';
import type { Bus } from '@switchboard/proto/bus';

/** Current rights of webhook owners, asked of the gateway (which owns identity). */
export interface OwnerDirectory {
  principalOf(userId: number): Promise<Principal | null>;
  start(): void;
  stop(): void;
}

interface Cached {
  readonly principal: Principal | null;
  readonly at: number;
  readonly generation: number;
}

/**
 * Caches each owner's principal for a short time. The gateway announces every change of
 * rights (`events.identity`) before it answers the change, and this drops the cached entries
 * at once, so the next event already follows the new rights; the TTL bounds staleness only
 * if an announcement is lost.
 */
export function createOwnerDirectory(deps: { bus: Bus; log: Logger; ttlMs: number }): OwnerDirectory {
  const { bus, log, ttlMs } = deps;
  const cache = new Map<number, Cached>();
  const loading = new Map<number, Promise<Principal | null>>();
  let generation = 0;
  let subscription: { unsubscribe(): void } | undefined;

  function forget(userIds: number[]): void {
    generation++;
    if (!userIds.length) cache.clear();
    for (const id of userIds) cache.delete(id);
    loading.clear();
  }

  return {
    principalOf(userId) {
      const hit = cache.get(userId);
      if (hit && hit.generation === generation && Date.now() - hit.at < ttlMs) {
        return Promise.resolve(hit.principal);
      }
      const running = loading.get(userId);
      if (running) return running;
      const startedAt = Date.now();
      const startedGeneration = generation;
      const result = bus
        .request(principalLookup, { user_id: userId }, { timeoutMs: 5_000 })
        .then(({ principal }) => {
          if (startedGeneration === generation) {
            cache.set(userId, { principal, at: startedAt, generation: startedGeneration });
          }
          return principal;
        })
        .finally(() => {
          if (loading.get(userId) === result) loading.delete(userId);
        });
      loading.set(userId, result);
      return result;
    },
    start() {
      subscription = bus.subscribe(identityChanged, (change) => {
        // Unreadable news of a change still means something changed: drop every cached owner.
        if (!change) log.warn('unreadable identity change; every cached owner dropped');
        forget(change?.user_ids ?? []);
      });
    },
    stop() {
      subscription?.unsubscribe();
    },
  };
}
