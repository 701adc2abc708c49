import { createOutboxTable, defineMigration } from '@switchboard/kit';
import { sql } from 'kysely';

export const m0001Provisioning = defineMigration(
  '0001_provisioning',
  sql`
    create table partners (
      id text primary key,
      name text not null,
      api_key_hash text not null unique,
      webhook_secret_sealed bytea not null,
      created_at timestamptz not null default now()
    )
  `,
  sql`
    create table instances (
      id text primary key,
      partner_id text not null references partners (id),
      subdomain text not null,
      status text not null check (status in ('provisioning', 'ready', 'failed', 'deleted')),
      channel_id text,
      phone_number_id text,
      display_phone_number text,
      settings jsonb not null,
      secrets_sealed bytea not null,
      provider_key_sealed bytea,
      database_name text not null,
      port integer,
      pid integer,
      allocated_at timestamptz,
      healthy_at timestamptz,
      token_sent_at timestamptz,
      token_attempts integer not null default 0,
      mail_sent_at timestamptz,
      failure jsonb,
      errors_sent_at timestamptz,
      errors_attempts integer not null default 0,
      created_at timestamptz not null default now(),
      ready_at timestamptz,
      deleted_at timestamptz
    )
  `,
  // One live instance per subdomain and per business number (spec 4.5): the database decides
  // races between two creations, not a read before the write.
  sql`create unique index instances_subdomain_key on instances (subdomain) where status <> 'deleted'`,
  sql`create unique index instances_number_key on instances (phone_number_id) where status <> 'deleted' and phone_number_id is not null`,
  sql`create index instances_partner_idx on instances (partner_id, created_at, id)`,
  sql`
    create table activation_tokens (
      token_hash text primary key,
      instance_id text not null references instances (id),
      created_at timestamptz not null default now(),
      used_at timestamptz
    )
  `,
  (db) => createOutboxTable(db, 'provisioner_outbox'),
);
