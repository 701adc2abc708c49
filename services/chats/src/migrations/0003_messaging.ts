import { defineMigration } from '@switchboard/kit';
import { sql } from 'kysely';

export const m0003Messaging = defineMigration(
  '0003_messaging',
  // Customers who wrote to the inbox, as the network names them.
  sql`
    create table persons (
      wa_id text primary key,
      profile_name text not null default '',
      first_seen_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )
  `,
  sql`create index persons_name_idx on persons (lower(profile_name))`,

  // One chat per customer. Times are POSIX seconds, as the API returns them.
  sql`
    create table chats (
      wa_id text primary key,
      last_message_at bigint not null default 0,
      last_customer_message_at bigint,
      customer_window_expires_at bigint,
      network_window_expires_at bigint,
      business_window_expires_at bigint,
      resolved boolean not null default false,
      assigned_to_user integer,
      assigned_group integer,
      created_at timestamptz not null default now()
    )
  `,
  sql`create index chats_activity_idx on chats (last_message_at desc, wa_id)`,
  sql`create index chats_user_idx on chats (assigned_to_user) where assigned_to_user is not null`,
  sql`create index chats_group_idx on chats (assigned_group) where assigned_group is not null`,

  sql`
    create table messages (
      id uuid primary key,
      wamid text unique,
      wa_id text not null references chats (wa_id),
      from_us boolean not null,
      received boolean not null default false,
      type text not null,
      waba_payload jsonb,
      sender_user_id integer,
      timestamp bigint not null,
      send_state text check (send_state in ('queued', 'sent', 'failed')),
      idempotency_key text,
      created_at timestamptz not null default now()
    )
  `,
  sql`create index messages_chat_time_idx on messages (wa_id, timestamp desc, id desc)`,
  sql`create unique index messages_idempotency_idx on messages (sender_user_id, idempotency_key)
    where idempotency_key is not null`,

  // Statuses by wamid, one row per status value: duplicates collapse, any order folds to the
  // same result, and a status that arrives before its wamid is recorded is kept, not lost.
  sql`
    create table message_statuses (
      wamid text not null,
      status text not null,
      timestamp bigint not null,
      errors jsonb,
      primary key (wamid, status)
    )
  `,

  // Per user and chat: inbound messages up to this time are read (new_messages counts the rest).
  sql`
    create table read_marks (
      user_id integer not null,
      wa_id text not null,
      read_until bigint not null,
      primary key (user_id, wa_id)
    )
  `,
);
