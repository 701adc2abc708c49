import { defineMigration } from '@switchboard/kit';
import { sql } from 'kysely';

export const m0002MediaFilesObjectKey = defineMigration(
  '0002_media_files_object_key',
  // Whether a stored object is still someone's file: asked when a deduplicated upload's copy is
  // removed, and by the orphan sweep for every object (without it, a scan of the table each).
  sql`create index media_files_object_key on media_files (object_key)`,
);
