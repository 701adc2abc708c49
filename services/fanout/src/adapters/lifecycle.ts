import { randomUUID } from 'node:crypto';
import { enqueueOutbox, type OutboxRelay } from '@switchboard/kit';
import {
  type AuditEntry,
  auditRecorded,
  type Principal,
  type WebhookLifecycleEvent,
  webhookLifecycle,
} from '@switchboard/proto';
import type { Kysely } from 'kysely';
import type { FanoutDatabase, WebhookRow } from '../db.ts';

export const FANOUT_OUTBOX = 'fanout_outbox';

/** What the fan-out's outbox relay may publish. */
export const fanoutOutboxContracts = [webhookLifecycle, auditRecorded] as const;

export interface Announcer {
  /**
   * Writes what happened to a webhook into the outbox, in the change's transaction when one is
   * given: a lifecycle event that every fanout process listens to (each reconciles that
   * webhook's consumers at once) and an event-log entry, so admins see who changed a webhook
   * and when fan-out disabled one on its own (actor null).
   */
  announce(
    trx: Kysely<FanoutDatabase>,
    row: WebhookRow,
    action: WebhookLifecycleEvent['action'],
    actor: Principal | null,
  ): Promise<void>;
  /**
   * The change committed: publish before answering (bounded), so every event published after
   * the answer already meets workers that know the change (a re-target, a disable).
   */
  committed(): Promise<void>;
}

export function createAnnouncer(relay: Pick<OutboxRelay, 'publishSoon'>): Announcer {
  return {
    async announce(trx, row, action, actor) {
      const reason = action === 'disabled' ? (row.disabled_reason ?? 'manual') : null;
      const at = Date.now();
      const lifecycle: WebhookLifecycleEvent = {
        webhook_id: row.id,
        owner: row.owner_user_id,
        action,
        reason,
        actor_user_id: actor?.user_id ?? null,
        url: row.url,
        at,
      };
      const entry: AuditEntry = {
        id: randomUUID(),
        action: `webhook.${action}`,
        actor: actor ? { user_id: actor.user_id, username: actor.username } : null,
        target_type: 'webhook',
        target_id: row.id,
        // Never the secret or the static headers: they may hold the receiver's credentials.
        details: { url: row.url, owner: row.owner_user_id, ...(reason ? { reason } : {}) },
        at,
      };
      await enqueueOutbox(trx, FANOUT_OUTBOX, [
        { contract: webhookLifecycle.name, payload: lifecycle, key: `${row.id}-${action}-${entry.id}` },
        { contract: auditRecorded.name, payload: entry, key: entry.id },
      ]);
    },
    committed: () => relay.publishSoon(2_000),
  };
}
