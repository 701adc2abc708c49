import { defineMigration } from '@switchboard/kit';
import { sql } from 'kysely';

export const m0006Organisation = defineMigration(
  '0006_organisation',
  // Contact providers: where contacts are read from. The signing secret is sealed with a key
  // derived from the instance secret (shown once, at creation).
  sql`
    create table contact_providers (
      id integer generated always as identity primary key,
      name text not null,
      kind text not null check (kind in ('http')),
      url text not null,
      secret_sealed bytea not null,
      priority integer not null default 100,
      enabled boolean not null default true,
      timeout_ms integer not null default 2000,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )
  `,

  sql`
    create table tags (
      id integer generated always as identity primary key,
      name text not null,
      web_inbox_color text not null,
      extra jsonb,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )
  `,
  sql`create unique index tags_name_key on tags (lower(name))`,

  // A pair exists once; deleting a tag removes its taggings (its events stay, with its name).
  sql`
    create table chat_taggings (
      id integer generated always as identity primary key,
      wa_id text not null references chats (wa_id),
      tag_id integer not null references tags (id) on delete cascade,
      created_by integer,
      created_at timestamptz not null default now(),
      unique (wa_id, tag_id)
    )
  `,
  sql`create index chat_taggings_tag_idx on chat_taggings (tag_id)`,
  sql`
    create table message_taggings (
      id integer generated always as identity primary key,
      message_id uuid not null references messages (id),
      wa_id text not null,
      tag_id integer not null references tags (id) on delete cascade,
      created_by integer,
      created_at timestamptz not null default now(),
      unique (message_id, tag_id)
    )
  `,
  sql`create index message_taggings_wa_id_idx on message_taggings (wa_id)`,
  sql`create index message_taggings_tag_idx on message_taggings (tag_id)`,

  sql`
    create table tagging_events (
      id bigint generated always as identity primary key,
      target text not null check (target in ('chat', 'message')),
      action text not null check (action in ('added', 'removed')),
      tag_id integer not null,
      tag_name text not null,
      wa_id text not null,
      message_id uuid,
      user_id integer,
      created_at timestamptz not null default now()
    )
  `,
  sql`create index tagging_events_target_idx on tagging_events (target, created_at desc, id desc)`,

  sql`
    create table saved_responses (
      id integer generated always as identity primary key,
      name text not null,
      text text not null,
      tags text[] not null default '{}',
      created_by integer,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )
  `,

  // Reports of customers (each also blocks them at the network).
  sql`
    create table contact_reports (
      id integer generated always as identity primary key,
      wa_id text not null,
      reason text not null,
      user_id integer,
      created_at timestamptz not null default now()
    )
  `,
);
