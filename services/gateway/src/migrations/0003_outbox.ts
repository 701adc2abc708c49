import { createOutboxTable, defineMigration } from '@switchboard/kit';

/** Event-log entries of user and group changes, written in the change's transaction. */
export const m0003Outbox = defineMigration('0003_outbox', (db) => createOutboxTable(db, 'gateway_outbox'));
