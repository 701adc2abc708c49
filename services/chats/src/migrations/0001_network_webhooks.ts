import type { Migration } from '@switchboard/kit';
import { type Kysely, sql } from 'kysely';

export const m0001NetworkWebhooks: Migration = {
  name: '0001_network_webhooks',
  async up(db: Kysely<unknown>) {
    // Every network webhook body as received, keyed by its inbound stream sequence so a
    // redelivered stream message is stored once. The audit trail and the source for reprocessing.
    await sql`
      create table network_webhooks (
        id bigint generated always as identity primary key,
        stream_seq bigint not null unique,
        received_at timestamptz not null,
        signature_verified boolean not null,
        body jsonb not null,
        stored_at timestamptz not null default now()
      )
    `.execute(db);
  },
};
