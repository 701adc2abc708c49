import type { Logger } from '@switchboard/kit';
import { auditConsumer } from '@switchboard/proto';
import type { Bus, Consumption } from '@switchboard/proto/bus';
import type { Kysely } from 'kysely';
import type { ChatsDatabase } from '../db.ts';
import { insertAuditEntry } from '../store/audit.ts';

/**
 * The instance's event log: entries of other services arrive as durable commands (ids make
 * the insert idempotent); chats writes its own in the transaction of the change.
 */
export async function startAuditLogConsumer(deps: {
  bus: Bus;
  db: Kysely<ChatsDatabase>;
  log: Logger;
}): Promise<Consumption> {
  const { bus, db, log } = deps;
  return bus.consume(
    auditConsumer,
    async (e) => {
      await insertAuditEntry(db, e);
      return undefined;
    },
    { onError: (err, at) => log.error({ err, ...at }, 'event-log entry not stored') },
  );
}
