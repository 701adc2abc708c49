import type { Logger, Subscription } from '@switchboard/kit';
import { AuditEntrySchema, auditConsumer, auditList, type Bus, type Consumption } from '@switchboard/proto';
import type { Kysely } from 'kysely';
import type { ChatsDatabase } from './db.ts';

/**
 * The instance's event log: entries arrive as durable commands from any service (ids make
 * the insert idempotent) and are served newest first over request/reply.
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
      await db
        .insertInto('audit_logs')
        .values({
          id: e.id,
          action: e.action,
          actor_user_id: e.actor?.user_id ?? null,
          actor_username: e.actor?.username ?? null,
          target_type: e.target_type,
          target_id: e.target_id,
          details: JSON.stringify(e.details),
          at: new Date(e.at),
        })
        .onConflict((oc) => oc.column('id').doNothing())
        .execute();
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
        AuditEntrySchema.parse({
          id: r.id,
          action: r.action,
          actor:
            r.actor_user_id === null ? null : { user_id: r.actor_user_id, username: r.actor_username ?? '' },
          target_type: r.target_type,
          target_id: r.target_id,
          details: r.details,
          at: r.at.getTime(),
        }),
      ),
    };
  });
  return { consumption, rpc };
}
