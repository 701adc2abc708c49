import { randomUUID } from 'node:crypto';
import type { Logger } from '@switchboard/kit';
import { type AuditEntry, auditRecorded, type Bus, type Principal } from '@switchboard/proto';

export type AuditFn = (
  actor: Principal | null,
  action: AuditEntry['action'],
  target: { type: AuditEntry['target_type']; id: string | number },
  details?: Record<string, unknown>,
) => Promise<void>;

/**
 * Records an event-log entry through the bus (chats stores it). Called after the change has
 * committed; a failed publish is logged and does not undo the change.
 */
export function createAudit(bus: Bus, log: Logger): AuditFn {
  return async (actor, action, target, details = {}) => {
    const entry: AuditEntry = {
      id: randomUUID(),
      action,
      actor: actor ? { user_id: actor.user_id, username: actor.username } : null,
      target_type: target.type,
      target_id: String(target.id),
      details,
      at: Date.now(),
    };
    try {
      await bus.publish(auditRecorded, entry, { idempotencyKey: entry.id });
    } catch (err) {
      log.error({ err, action, target }, 'event-log entry not recorded');
    }
  };
}
