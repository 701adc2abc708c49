import { defineMigration } from '@switchboard/kit';
import { sql } from 'kysely';

/**
 * Push-notification tokens of the inbox users. A token is one device: registering it again
 * (by its owner or by whoever signs in on that device next) updates the same row, found by the
 * token's SHA-256 (tokens such as Web Push subscriptions are too long for a plain unique index).
 */
export const m0004PushTokens = defineMigration(
  '0004_push_tokens',
  sql`
    create table push_tokens (
      id integer generated always as identity primary key,
      user_id integer not null references users (id) on delete cascade,
      token text not null,
      token_hash bytea not null unique,
      platform text not null check (platform in ('fcm', 'apns', 'webpush')),
      device_name text not null default '',
      enabled boolean not null default true,
      registered_at timestamptz not null default now(),
      last_used_at timestamptz,
      created_at timestamptz not null default now()
    )
  `,
  sql`create index push_tokens_user_idx on push_tokens (user_id)`,
);
