import { defineMigration } from '@switchboard/kit';
import { sql } from 'kysely';

/**
 * One counter row per limit key and window, so a login can take its slot with a single
 * INSERT ... ON CONFLICT statement instead of counting rows and inserting afterwards (which let
 * parallel attempts all pass the count). `auth_failures` stays for now: gateways still running
 * the previous release write to it during a rolling deploy; a later migration can drop it.
 */
export const m0002AuthAttempts = defineMigration(
  '0002_auth_attempts',
  sql`
    create table auth_attempts (
      key text primary key,
      window_start timestamptz not null,
      count integer not null check (count >= 0)
    )
  `,
  sql`create index auth_attempts_window_start_idx on auth_attempts (window_start)`,
);
