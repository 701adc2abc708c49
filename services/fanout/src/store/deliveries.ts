import type { SecretBox } from '@switchboard/kit';
import type { Insertable, Kysely } from 'kysely';
import { openWebhook } from '../adapters/sealing.ts';
import type {
  DeliveryTrigger,
  DisabledReason,
  FanoutDatabase,
  WebhookDeadLettersTable,
  WebhookRow,
} from '../db.ts';

export interface WebhookStore {
  /**
   * The webhook row, from a short-lived cache. Every change made through the management RPCs
   * publishes a lifecycle event that reaches each worker before any event published after the
   * change, and the worker calls `invalidate` synchronously on it: a re-target, disable or
   * rotation applies to every later event. The TTL only bounds staleness if an event is lost.
   * The row comes opened: secrets and headers as signing needs them.
   */
  load(id: string): Promise<WebhookRow | undefined>;
  /** Forgets the cached row; a load already running is not reused after this. */
  invalidate(id: string): void;
  /** Starts the failure streak unless one is running. */
  markFailing(id: string, since: Date): Promise<void>;
  clearFailing(id: string): Promise<void>;
  /** Disables an enabled webhook; the row when this call disabled it, undefined when it already was. */
  disable(id: string, reason: DisabledReason): Promise<WebhookRow | undefined>;
  /** Keeps a given-up event for replay; false when the webhook no longer exists. */
  recordDeadLetter(entry: Insertable<WebhookDeadLettersTable>): Promise<boolean>;
  /** Failed attempts logged for this event and trigger since `since` (the message's own, not a replayed one's predecessors). */
  failedAttempts(webhookId: string, eventId: string, trigger: DeliveryTrigger, since: Date): Promise<number>;
}

interface Cached {
  readonly row: WebhookRow | undefined;
  readonly loadedAt: number;
  readonly generation: number;
}

interface Loading {
  readonly generation: number;
  readonly result: Promise<WebhookRow | undefined>;
}

const FOREIGN_KEY_VIOLATION = '23503';

export function createWebhookStore(
  db: Kysely<FanoutDatabase>,
  opts: { cacheTtlMs: number; box: SecretBox },
): WebhookStore {
  const cache = new Map<string, Cached>();
  const loading = new Map<string, Loading>();
  // Bumped by every invalidation: a query that started before it must not fill the cache.
  const generations = new Map<string, number>();

  function invalidate(id: string): void {
    generations.set(id, (generations.get(id) ?? 0) + 1);
    cache.delete(id);
  }

  return {
    load(id) {
      const generation = generations.get(id) ?? 0;
      const hit = cache.get(id);
      if (hit && hit.generation === generation && Date.now() - hit.loadedAt < opts.cacheTtlMs) {
        return Promise.resolve(hit.row);
      }
      const running = loading.get(id);
      if (running && running.generation === generation) return running.result;
      const startedAt = Date.now();
      const entry: Loading = {
        generation,
        result: db
          .selectFrom('webhooks')
          .selectAll()
          .where('id', '=', id)
          .executeTakeFirst()
          .then((stored) => {
            const row = stored && openWebhook(opts.box, stored);
            if ((generations.get(id) ?? 0) === generation)
              cache.set(id, { row, loadedAt: startedAt, generation });
            return row;
          })
          .finally(() => {
            if (loading.get(id) === entry) loading.delete(id);
          }),
      };
      loading.set(id, entry);
      return entry.result;
    },

    invalidate,

    async markFailing(id, since) {
      await db
        .updateTable('webhooks')
        .set({ failing_since: since })
        .where('id', '=', id)
        .where('failing_since', 'is', null)
        .execute();
      invalidate(id);
    },

    async clearFailing(id) {
      await db
        .updateTable('webhooks')
        .set({ failing_since: null })
        .where('id', '=', id)
        .where('failing_since', 'is not', null)
        .execute();
      invalidate(id);
    },

    async disable(id, reason) {
      invalidate(id);
      const stored = await db
        .updateTable('webhooks')
        .set({ enabled: false, disabled_reason: reason, updated_at: new Date() })
        .where('id', '=', id)
        .where('enabled', '=', true)
        .returningAll()
        .executeTakeFirst();
      // Again: a load that ran during the update may have read the row before it.
      invalidate(id);
      return stored && openWebhook(opts.box, stored);
    },

    async failedAttempts(webhookId, eventId, trigger, since) {
      const { n } = await db
        .selectFrom('webhook_attempts')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('webhook_id', '=', webhookId)
        .where('event_id', '=', eventId)
        .where('success', '=', false)
        .where('trigger', '=', trigger)
        .where('attempted_at', '>=', since)
        .executeTakeFirstOrThrow();
      return Number(n);
    },

    async recordDeadLetter(entry) {
      try {
        await db
          .insertInto('webhook_dead_letters')
          .values(entry)
          .onConflict((oc) =>
            oc.columns(['webhook_id', 'event_id']).doUpdateSet((eb) => ({
              reason: eb.ref('excluded.reason'),
              attempts: eb.ref('excluded.attempts'),
              last_status_code: eb.ref('excluded.last_status_code'),
              last_error: eb.ref('excluded.last_error'),
              dead_at: new Date(),
              replayed_at: null,
            })),
          )
          .execute();
        return true;
      } catch (err) {
        if ((err as { code?: unknown }).code === FOREIGN_KEY_VIOLATION) return false;
        throw err;
      }
    },
  };
}
