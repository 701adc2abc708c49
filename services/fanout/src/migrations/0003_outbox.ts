import { createOutboxTable, defineMigration } from '@switchboard/kit';

/** Lifecycle events and event-log entries of webhook changes, written with the change. */
export const m0003Outbox = defineMigration('0003_outbox', (db) => createOutboxTable(db, 'fanout_outbox'));
