import { defineMigration } from '@switchboard/kit';
import { sql } from 'kysely';

/** Activation mails that failed: retried on the partner events' schedule, then given up. */
export const m0002MailAttempts = defineMigration(
  '0002_mail_attempts',
  sql`alter table instances add column mail_attempts integer not null default 0`,
);
