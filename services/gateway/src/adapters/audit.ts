import { randomUUID } from 'node:crypto';
import { enqueueOutbox, type Logger } from '@switchboard/kit';
import { type AuditEntry, auditRecorded, identityChanged, type Principal } from '@switchboard/proto';
import type { Bus } from '@switchboard/proto/bus';
import type { Transaction } from 'kysely';
import type { GatewayDatabase } from '../store/db.ts';

export interface Audit {
  /** Writes the entry in the change's transaction. */
  record(
    trx: Transaction<GatewayDatabase>,
    actor: Principal | null,
    action: AuditEntry['action'],
    target: { type: AuditEntry['target_type']; id: string | number },
    details?: Record<string, unknown>,
  ): Promise<void>;
  /** The transaction committed: publish without waiting for the relay's next poll. */
  committed(): void;
}

export const GATEWAY_OUTBOX = 'gateway_outbox';

/** What the gateway's outbox relay may publish. */
export const gatewayOutboxContracts = [auditRecorded] as const;

/**
 * Records an event-log entry in the change's own transaction (the gateway's outbox); the relay
 * publishes it to chats, which stores it. A change without its entry, or an entry without its
 * change, cannot happen, and a NATS outage only delays entries.
 */
export function createAudit(relay: { kick(): void }): Audit {
  const record: Audit['record'] = async (trx, actor, action, target, details = {}) => {
    const entry: AuditEntry = {
      id: randomUUID(),
      action,
      actor: actor ? { user_id: actor.user_id, username: actor.username } : null,
      target_type: target.type,
      target_id: String(target.id),
      details,
      at: Date.now(),
    };
    await enqueueOutbox(trx, GATEWAY_OUTBOX, [
      { contract: auditRecorded.name, payload: entry, key: entry.id },
    ]);
  };
  return { record, committed: () => relay.kick() };
}

/** `userIds` empty: anyone may be affected. */
export type RightsChangedFn = (userIds: number[]) => Promise<void>;

/**
 * Tells the services that cache principals (the fan-out) that rights changed, before the
 * change is answered, so the next event already follows the new rights. The answer waits for
 * the announcement at most `waitMs`: during a NATS outage a change must still be answered, and
 * the caches' short lifetime bounds how long old rights can apply.
 */
export function createRightsNotifier(bus: Bus, log: Logger, waitMs = 500): RightsChangedFn {
  return async (userIds) => {
    const published = bus.publish(identityChanged, { user_ids: userIds, at: Date.now() }).then(
      () => undefined,
      (err: unknown) =>
        log.warn({ err, user_ids: userIds }, 'rights change not announced; caches expire on their own'),
    );
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, waitMs);
    });
    await Promise.race([published, waited]);
    clearTimeout(timer);
  };
}
