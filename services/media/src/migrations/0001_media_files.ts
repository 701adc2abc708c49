import { defineMigration } from '@switchboard/kit';
import { sql } from 'kysely';

export const m0001MediaFiles = defineMigration(
  '0001_media_files',
  sql`
    create table media_files (
      id uuid primary key,
      object_key text not null,
      sha256 text not null check (sha256 ~ '^[0-9a-f]{64}$'),
      size bigint not null check (size > 0),
      mime_type text not null,
      file_name text,
      origin text not null check (origin in ('upload', 'inbound', 'import')),
      created_by integer,
      source_wamid text unique,
      network_media_id text,
      network_media_at timestamptz,
      created_at timestamptz not null default now()
    )
  `,
  // Dedupe: a new upload looks for stored bytes with the same digest.
  sql`create index media_files_sha256 on media_files (sha256)`,
);
