import { randomUUID } from 'node:crypto';
import type { AuditEntry, Principal } from '@switchboard/proto';

/** An event-log entry about one object other than a chat (a tag, a provider, a saved response, a message). */
export function entityAuditEntry(
  actor: Principal,
  action: string,
  targetType: AuditEntry['target_type'],
  targetId: string | number,
  details: Record<string, unknown>,
): AuditEntry {
  return {
    id: randomUUID(),
    action,
    actor: { user_id: actor.user_id, username: actor.username },
    target_type: targetType,
    target_id: String(targetId),
    details,
    at: Date.now(),
  };
}
