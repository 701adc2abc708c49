import { randomUUID } from 'node:crypto';
import type { Logger } from '@switchboard/kit';
import { type AuditEntry, auditRecorded, type Bus, type Principal } from '@switchboard/proto';

export type AuditFn = (
  actor: Principal | null,
  action: AuditEntry['action'],
  target: { type: AuditEntry['target_type']; id: string | number },
  details?: Record<string, unknown>,
) => void;

/**
 * Records an event-log entry through the bus (chats stores it). Called after the change has
 * committed, and off the request path: the caller's answer never waits for the retries. A
 * publish that still fails after them is logged and does not undo the change.
 */
export function createAudit(bus: Bus, log: Logger): AuditFn {
  const publish = async (entry: AuditEntry) => {
    // A short NATS outage must not drop the entry: retry (the id de-duplicates), then give up loudly.
    for (let attempt = 1; ; attempt++) {
      try {
        await bus.publish(auditRecorded, entry, { idempotencyKey: entry.id });
        return;
      } catch (err) {
        if (attempt >= 5) {
          log.error({ err, action: entry.action, target: entry.target_id }, 'event-log entry not recorded');
          return;
        }
        await new Promise((r) => setTimeout(r, 200 * 2 ** attempt));
      }
    }
  };
  return (actor, action, target, details = {}) => {
    const entry: AuditEntry = {
      id: randomUUID(),
      action,
      actor: actor ? { user_id: actor.user_id, username: actor.username } : null,
      target_type: target.type,
      target_id: String(target.id),
      details,
      at: Date.now(),
    };
    void publish(entry);
  };
}
