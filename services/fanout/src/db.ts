import type { NetworkEvent } from '@switchboard/proto';
import type { ColumnType, Generated, Insertable, Selectable } from 'kysely';

type Timestamp = ColumnType<Date, Date | string, Date | string>;
type Json<T> = ColumnType<T, string, string>;

export type DisabledReason = 'manual' | 'gone' | 'failing';
export type DeadLetterReason = 'attempts_exhausted' | 'gone' | 'failing';
export type DeliveryTrigger = 'event' | 'replay' | 'test';

export interface WebhooksTable {
  id: Generated<string>;
  owner_user_id: number;
  url: string;
  enabled: Generated<boolean>;
  ordered: Generated<boolean>;
  /**
   * The static headers (a JSON object), the signing secret and the one before a rotation are
   * sealed with the instance key (see sealing.ts): they are the receivers' credentials.
   */
  sealed_headers: Buffer;
  sealed_secret: Buffer;
  sealed_previous_secret: Buffer | null;
  previous_secret_expires_at: Timestamp | null;
  disabled_reason: DisabledReason | null;
  failing_since: Timestamp | null;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface WebhookAttemptsTable {
  id: Generated<number>;
  webhook_id: string;
  event_id: string;
  message_id: string;
  attempt: number;
  trigger: DeliveryTrigger;
  url: string;
  success: boolean;
  status_code: number | null;
  duration_ms: number;
  error_class: string | null;
  error: string | null;
  response_excerpt: string | null;
  next_attempt_at: Timestamp | null;
  dead_lettered: boolean;
  attempted_at: Timestamp;
}

export interface WebhookDeadLettersTable {
  id: Generated<number>;
  webhook_id: string;
  event_id: string;
  message_id: string;
  received_at: Timestamp;
  kinds: Json<NetworkEvent['kinds']>;
  wa_ids: Json<string[]>;
  /** The event's chats with their assignment; null on rows written before it was kept. */
  chats: ColumnType<NonNullable<NetworkEvent['chats']> | null, string | null, string | null>;
  body: string;
  reason: DeadLetterReason;
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  dead_at: Generated<Date>;
  replayed_at: Timestamp | null;
  replay_count: Generated<number>;
}

/** Messages waiting for the outbox relay (kit's `createOutboxTable`). */
export interface FanoutOutboxTable {
  id: Generated<number>;
  contract: string;
  payload: unknown;
  key: string;
  created_at: Generated<Date>;
}

export interface FanoutDatabase {
  fanout_outbox: FanoutOutboxTable;
  webhooks: WebhooksTable;
  webhook_attempts: WebhookAttemptsTable;
  webhook_dead_letters: WebhookDeadLettersTable;
}

/** A webhook as stored: its credentials sealed. */
export type StoredWebhookRow = Selectable<WebhooksTable>;

/** A webhook with its credentials opened, as signing and the API need it; never written back as is. */
export interface WebhookRow
  extends Omit<StoredWebhookRow, 'sealed_headers' | 'sealed_secret' | 'sealed_previous_secret'> {
  headers: Record<string, string>;
  secret: string;
  previous_secret: string | null;
}
export type NewAttempt = Insertable<WebhookAttemptsTable>;
export type AttemptRow = Selectable<WebhookAttemptsTable>;
