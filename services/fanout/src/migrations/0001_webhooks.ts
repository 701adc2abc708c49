import { defineMigration } from '@switchboard/kit';
import { sql } from 'kysely';

export const m0001Webhooks = defineMigration(
  '0001_webhooks',
  // One row per per-user webhook. The JetStream durables are named after the id, so the id
  // never changes; secrets stay readable because signing needs the raw key.
  sql`
    create table webhooks (
      id uuid primary key default gen_random_uuid(),
      owner_user_id integer not null,
      url text not null,
      enabled boolean not null default true,
      ordered boolean not null default false,
      headers jsonb not null default '{}'::jsonb,
      secret text not null,
      previous_secret text,
      previous_secret_expires_at timestamptz,
      disabled_reason text check (disabled_reason in ('manual', 'gone', 'failing')),
      failing_since timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )
  `,
  sql`create index webhooks_owner on webhooks (owner_user_id, created_at)`,

  // The attempt log, written in batches. No foreign key: a batch must never fail because a
  // webhook was deleted a moment earlier; deleting a webhook deletes its rows explicitly.
  sql`
    create table webhook_attempts (
      id bigint generated always as identity primary key,
      webhook_id uuid not null,
      event_id text not null,
      message_id text not null,
      attempt integer not null,
      trigger text not null check (trigger in ('event', 'replay', 'test')),
      url text not null,
      success boolean not null,
      status_code integer,
      duration_ms integer not null,
      error_class text,
      error text,
      response_excerpt text,
      next_attempt_at timestamptz,
      dead_lettered boolean not null default false,
      attempted_at timestamptz not null
    )
  `,
  sql`create index webhook_attempts_by_webhook on webhook_attempts (webhook_id, id desc)`,

  // Events a webhook gave up on, with the body so a replay works after the stream's retention.
  sql`
    create table webhook_dead_letters (
      id bigint generated always as identity primary key,
      webhook_id uuid not null references webhooks (id) on delete cascade,
      event_id text not null,
      message_id text not null,
      received_at timestamptz not null,
      kinds jsonb not null,
      wa_ids jsonb not null,
      body text not null,
      reason text not null check (reason in ('attempts_exhausted', 'gone', 'failing')),
      attempts integer not null,
      last_status_code integer,
      last_error text,
      dead_at timestamptz not null default now(),
      replayed_at timestamptz,
      replay_count integer not null default 0,
      unique (webhook_id, event_id)
    )
  `,
  sql`create index webhook_dead_letters_by_time on webhook_dead_letters (webhook_id, dead_at)`,
);
