import { AuditLogSchema, type auditList, posixSeconds } from '@switchboard/proto';
import { auditPage } from '../store/audit.ts';
import type { Db, RequestOf } from './types.ts';

/** `audit_list`: the instance's event log, newest first. */
export async function listAuditLog(deps: { db: Db }, r: RequestOf<typeof auditList>) {
  const { count, rows } = await auditPage(deps.db, r);
  return {
    count,
    results: rows.map((row) =>
      AuditLogSchema.parse({
        id: row.id,
        action: row.action,
        actor:
          row.actor_user_id === null
            ? null
            : { user_id: row.actor_user_id, username: row.actor_username ?? '' },
        target_type: row.target_type,
        target_id: row.target_id,
        details: row.details,
        at: posixSeconds(row.at),
      }),
    ),
  };
}
