import type { ColumnType, Generated } from 'kysely';

export interface NetworkWebhooksTable {
  id: Generated<number>;
  stream_seq: number;
  received_at: ColumnType<Date, Date | string, never>;
  signature_verified: boolean;
  body: ColumnType<unknown, string, never>;
  stored_at: Generated<Date>;
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

export interface ChatsDatabase {
  network_webhooks: NetworkWebhooksTable;
  audit_logs: AuditLogsTable;
}
