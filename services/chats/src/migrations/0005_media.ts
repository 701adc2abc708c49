import type { Migration } from '@switchboard/kit';
import { type Kysely, sql } from 'kysely';

/**
 * The file of a customer's media message, as the media service reports it once stored (or
 * refused by the network); null while it is being fetched and for messages without one.
 */
export const m0005Media: Migration = {
  name: '0005_media',
  async up(db: Kysely<unknown>) {
    await sql`alter table messages add column media jsonb`.execute(db);
  },
};
