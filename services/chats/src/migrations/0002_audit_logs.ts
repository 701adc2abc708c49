import { defineMigration } from '@switchboard/kit';
import { sql } from 'kysely';

export const m0002AuditLogs = defineMigration(
  '0002_audit_logs',
  sql`
    create table audit_logs (
      id uuid primary key,
      action text not null,
      actor_user_id integer,
      actor_username text,
      target_type text not null,
      target_id text not null,
      details jsonb not null default '{}',
      at timestamptz not null
    )
  `,
  sql`create index audit_logs_at_idx on audit_logs (at desc, id desc)`,
  sql`create index audit_logs_target_idx on audit_logs (target_type, target_id, at desc)`,
);
