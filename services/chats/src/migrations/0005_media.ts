import { defineMigration } from '@switchboard/kit';
import { sql } from 'kysely';

/**
 * The file of a customer's media message, as the media service reports it once stored (or
 * refused by the network); null while it is being fetched and for messages without one.
 */
export const m0005Media = defineMigration('0005_media', sql`alter table messages add column media jsonb`);
