import { createOutboxTable, type Migration } from '@switchboard/kit';
import type { Kysely } from 'kysely';

/** Lifecycle events and event-log entries of webhook changes, written with the change. */
export const m0003Outbox: Migration = {
  name: '0003_outbox',
  async up(db: Kysely<unknown>) {
    await createOutboxTable(db, 'fanout_outbox');
  },
};
