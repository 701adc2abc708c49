import { defineMigration } from '@switchboard/kit';
import { sql } from 'kysely';

export const m0001NetworkWebhooks = defineMigration(
  '0001_network_webhooks',
  // Every network webhook body as received, keyed by its inbound stream sequence so a
  // redelivered stream message is stored once. The audit trail and the source for reprocessing.
  sql`
    create table network_webhooks (
      id bigint generated always as identity primary key,
      stream_seq bigint not null unique,
      received_at timestamptz not null,
      signature_verified boolean not null,
      body jsonb not null,
      stored_at timestamptz not null default now()
    )
  `,
);
