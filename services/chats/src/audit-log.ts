import type { Logger, Subscription } from '@switchboard/kit';
import {
  AuditLogSchema,
  auditConsumer,
  auditList,
  type Bus,
  type Consumption,
  posixSeconds,
} from '@switchboard/proto';
import type { Kysely } from 'kysely';
import type { ChatsDatabase } from './db.ts';
import { insertAuditEntry } from './store/audit.ts';

/**
 * The instance's event log: entries of other services arrive as durable commands (ids make
 * the insert idempotent); chats writes its own in the transaction of the change. Served newest
 * first over request/reply.
 */
export async function startAuditLog(deps: {
  bus: Bus;
  db: Kysely<ChatsDatabase>;
  log: Logger;
}): Promise<{ consumption: Consumption; rpc: Subscription }> {
  const { bus, db, log } = deps;
  const consumption = await bus.consume(
    auditConsumer,
    async (e) => {
      await insertAuditEntry(db, e);
      return undefined;
    },
    { onError: (err, at) => log.error({ err, ...at }, 'event-log entry not stored') },
  );

  const rpc = bus.serve(auditList, async (req) => {
    let base = db.selectFrom('audit_logs');
    if (req.target_type) base = base.where('target_type', '=', req.target_type);
    if (req.target_id) base = base.where('target_id', '=', req.target_id);
    if (req.action) base = base.where('action', '=', req.action);
    const { n } = await base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    const rows = await base
      .selectAll()
      .orderBy('at', 'desc')
      .orderBy('id', 'desc')
      .limit(req.limit)
      .offset(req.offset)
      .execute();
    return {
      count: Number(n),
      results: rows.map((r) =>
        AuditLogSchema.parse({
          id: r.id,
          action: r.action,
          actor:
            r.actor_user_id === null ? null : { user_id: r.actor_user_id, username: r.actor_username ?? '' },
          target_type: r.target_type,
          target_id: r.target_id,
          details: r.details,
          at: posixSeconds(r.at),
        }),
      ),
    };
  });
  return { consumption, rpc };
}
