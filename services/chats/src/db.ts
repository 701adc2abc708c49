import type { ColumnType, Generated } from 'kysely';

export interface NetworkWebhooksTable {
  id: Generated<number>;
  stream_seq: number;
  received_at: ColumnType<Date, Date | string, never>;
  signature_verified: boolean;
  body: ColumnType<unknown, string, never>;
  stored_at: Generated<Date>;
}

export interface ChatsDatabase {
  network_webhooks: NetworkWebhooksTable;
}
