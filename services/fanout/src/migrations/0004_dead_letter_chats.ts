import { defineMigration } from '@switchboard/kit';
import { sql } from 'kysely';

/**
 * A dead letter keeps the chats its event concerned (with their assignment), so a replay is
 * judged against the owner's rights like the first delivery was. Rows from before have none:
 * their replays count the event's customers as unassigned.
 */
export const m0004DeadLetterChats = defineMigration(
  '0004_dead_letter_chats',
  sql`alter table webhook_dead_letters add column chats jsonb`,
);
