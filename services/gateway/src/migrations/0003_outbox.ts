import { createOutboxTable, type Migration } from '@switchboard/kit';
import type { Kysely } from 'kysely';

/** Event-log entries of user and group changes, written in the change's transaction. */
export const m0003Outbox: Migration = {
  name: '0003_outbox',
  async up(db: Kysely<unknown>) {
    await createOutboxTable(db, 'gateway_outbox');
  },
};
