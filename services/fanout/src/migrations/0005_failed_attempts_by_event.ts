import { defineMigration } from '@switchboard/kit';
import { sql } from 'kysely';

/**
 * An event's failed attempts, counted when it comes back: the attempt number is the POSTs
 * made, not JetStream's delivery count (which also grows when the worker itself failed).
 * Partial, so the successful deliveries (nearly all rows) cost no second index entry.
 */
export const m0005FailedAttemptsByEvent = defineMigration(
  '0005_failed_attempts_by_event',
  sql`create index webhook_attempts_failed_by_event on webhook_attempts (webhook_id, event_id) where not success`,
);
