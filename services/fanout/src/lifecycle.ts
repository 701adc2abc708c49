import { randomUUID } from 'node:crypto';
import type { Logger } from '@switchboard/kit';
import {
  auditRecorded,
  type Bus,
  type Principal,
  type WebhookLifecycleEvent,
  webhookLifecycle,
} from '@switchboard/proto';
import type { WebhookRow } from './db.ts';

export type Announce = (
  row: WebhookRow,
  action: WebhookLifecycleEvent['action'],
  actor: Principal | null,
) => Promise<void>;

/**
 * Publishes what happened to a webhook, twice: a lifecycle event that every fanout process
 * listens to (each reconciles that webhook's consumers at once), and an event-log entry, so
 * admins see who changed a webhook and when fan-out disabled one on its own (actor null).
 */
export function createAnnouncer(bus: Bus, log: Logger): Announce {
  return async (row, action, actor) => {
    const reason = action === 'disabled' ? (row.disabled_reason ?? 'manual') : null;
    const at = Date.now();
    try {
      await bus.publish(webhookLifecycle, {
        webhook_id: row.id,
        owner: row.owner_user_id,
        action,
        reason,
        actor_user_id: actor?.user_id ?? null,
        url: row.url,
        at,
      });
    } catch (err) {
      // The change is committed; workers pick it up at their next periodic reconcile.
      log.warn({ err, webhook: row.id, action }, 'lifecycle event not published');
    }
    const id = randomUUID();
    try {
      await bus.publish(
        auditRecorded,
        {
          id,
          action: `webhook.${action}`,
          actor: actor ? { user_id: actor.user_id, username: actor.username } : null,
          target_type: 'webhook',
          target_id: row.id,
          // Never the secret or the static headers: they may hold the receiver's credentials.
          details: { url: row.url, owner: row.owner_user_id, ...(reason ? { reason } : {}) },
          at,
        },
        { idempotencyKey: id },
      );
    } catch (err) {
      log.warn({ err, webhook: row.id, action }, 'event-log entry not published');
    }
  };
}
