import type { MessageMedia } from '@switchboard/proto';
import type { ColumnType, Generated } from 'kysely';

export interface NetworkWebhooksTable {
  id: Generated<number>;
  stream_seq: number;
  received_at: ColumnType<Date, Date | string, never>;
  signature_verified: boolean;
  /** The body as jsonb, with what jsonb cannot hold (`\u0000`, lone surrogates) replaced; null if not JSON. */
  body: ColumnType<unknown, string | null, never>;
  /** The body's bytes exactly as received (null on rows stored before migration 0004). */
  body_raw: ColumnType<Buffer | null, Buffer, never>;
  stored_at: Generated<Date>;
}

export interface InboundDeadLettersTable {
  id: Generated<number>;
  stream_seq: number;
  received_at: ColumnType<Date, Date, never>;
  signature_verified: boolean;
  body: ColumnType<Buffer, Buffer, never>;
  wa_ids: ColumnType<string[], string[], never>;
  error: string;
  error_code: string | null;
  attempts: number;
  redrivable: ColumnType<boolean, boolean | undefined, never>;
  created_at: Generated<Date>;
  redriven_at: ColumnType<Date | null, never, Date | null>;
}

export interface AuditLogsTable {
  id: string;
  action: string;
  actor_user_id: number | null;
  actor_username: string | null;
  target_type: string;
  target_id: string;
  details: ColumnType<Record<string, unknown>, string, never>;
  at: ColumnType<Date, Date, never>;
}

export interface PersonsTable {
  wa_id: string;
  profile_name: string;
  first_seen_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface ChatsTable {
  wa_id: string;
  last_message_at: Generated<number>;
  last_customer_message_at: number | null;
  customer_window_expires_at: number | null;
  network_window_expires_at: number | null;
  business_window_expires_at: number | null;
  resolved: Generated<boolean>;
  assigned_to_user: number | null;
  assigned_group: number | null;
  created_at: Generated<Date>;
}

export interface MessagesTable {
  id: string;
  wamid: string | null;
  wa_id: string;
  from_us: boolean;
  received: Generated<boolean>;
  type: string;
  waba_payload: ColumnType<unknown, string | null, string | null>;
  sender_user_id: number | null;
  timestamp: number;
  send_state: 'queued' | 'sent' | 'failed' | null;
  idempotency_key: string | null;
  created_at: Generated<Date>;
  /** Accept order: sends to one customer reach the network in this order. */
  send_seq: Generated<number>;
  /** Network attempts of a send that failed transiently so far. */
  send_attempts: Generated<number>;
  /** When a send that failed transiently is tried again. */
  next_attempt_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  /** A worker is calling the network for this send until then. */
  send_lease_until: ColumnType<Date | null, Date | null | undefined, Date | null>;
  /** SHA-256 of the send request, stored with its Idempotency-Key. */
  request_hash: ColumnType<string | null, string | null | undefined, string | null>;
  /** The file of a customer's media message (`MessageMedia`), set by the media service. */
  media: ColumnType<MessageMedia | null, string | null | undefined, string | null>;
}

export interface MessageStatusesTable {
  wamid: string;
  status: string;
  timestamp: number;
  errors: ColumnType<unknown, string | null, string | null>;
}

export interface ReadMarksTable {
  user_id: number;
  wa_id: string;
  read_until: number;
}

export interface ContactProvidersTable {
  id: Generated<number>;
  name: string;
  kind: 'http';
  url: string;
  secret_sealed: Buffer;
  priority: number;
  enabled: boolean;
  timeout_ms: number;
  created_at: Generated<Date>;
  updated_at: ColumnType<Date, Date | undefined, Date>;
}

export interface TagsTable {
  id: Generated<number>;
  name: string;
  web_inbox_color: string;
  extra: ColumnType<unknown, string | null, string | null>;
  created_at: Generated<Date>;
  updated_at: ColumnType<Date, Date | undefined, Date>;
}

export interface ChatTaggingsTable {
  id: Generated<number>;
  wa_id: string;
  tag_id: number;
  created_by: number | null;
  created_at: Generated<Date>;
}

export interface MessageTaggingsTable {
  id: Generated<number>;
  message_id: string;
  wa_id: string;
  tag_id: number;
  created_by: number | null;
  created_at: Generated<Date>;
}

export interface TaggingEventsTable {
  id: Generated<number>;
  target: 'chat' | 'message';
  action: 'added' | 'removed';
  tag_id: number;
  tag_name: string;
  wa_id: string;
  message_id: string | null;
  user_id: number | null;
  created_at: Generated<Date>;
}

export interface SavedResponsesTable {
  id: Generated<number>;
  name: string;
  text: string;
  tags: string[];
  created_by: number | null;
  created_at: Generated<Date>;
  updated_at: ColumnType<Date, Date | undefined, Date>;
}

export interface ContactReportsTable {
  id: Generated<number>;
  wa_id: string;
  reason: string;
  user_id: number | null;
  created_at: Generated<Date>;
}

export interface ChatsDatabase {
  network_webhooks: NetworkWebhooksTable;
  inbound_dead_letters: InboundDeadLettersTable;
  audit_logs: AuditLogsTable;
  persons: PersonsTable;
  chats: ChatsTable;
  messages: MessagesTable;
  message_statuses: MessageStatusesTable;
  read_marks: ReadMarksTable;
  contact_providers: ContactProvidersTable;
  tags: TagsTable;
  chat_taggings: ChatTaggingsTable;
  message_taggings: MessageTaggingsTable;
  tagging_events: TaggingEventsTable;
  saved_responses: SavedResponsesTable;
  contact_reports: ContactReportsTable;
}
