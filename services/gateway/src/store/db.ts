import type { ChatAccess, Role } from '@switchboard/proto';
import type { ColumnType, Generated } from 'kysely';

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;

export interface UsersTable {
  id: Generated<number>;
  username: string;
  email: Generated<string>;
  first_name: Generated<string>;
  last_name: Generated<string>;
  role: Role;
  password_hash: string | null;
  is_active: Generated<boolean>;
  is_available: Generated<boolean>;
  can_use_tags: Generated<boolean>;
  can_read_chats: Generated<ChatAccess>;
  can_write_to_chats: Generated<ChatAccess>;
  assigned_wa_ids: Generated<string[]>;
  created_at: Generated<Date>;
  updated_at: Timestamp;
}

export interface GroupsTable {
  id: Generated<number>;
  name: string;
  created_at: Generated<Date>;
}

export interface UserGroupsTable {
  user_id: number;
  group_id: number;
}

export interface AuthTokensTable {
  user_id: number;
  token_hash: Buffer;
  token_encrypted: Buffer;
  created_at: Generated<Date>;
}

export interface RefreshTokensTable {
  id: Generated<number>;
  user_id: number;
  token_hash: Buffer;
  purpose: 'refresh' | 'passwordless';
  expires_at: Date;
  used_at: Date | null;
  created_at: Generated<Date>;
}

export interface AuthFailuresTable {
  key: string;
  at: Generated<Date>;
}

/** Messages waiting for the outbox relay (kit's `createOutboxTable`). */
export interface OutboxTable {
  id: Generated<number>;
  contract: string;
  payload: unknown;
  key: string;
  created_at: Generated<Date>;
}

export interface PushTokensTable {
  id: Generated<number>;
  user_id: number;
  token: string;
  token_hash: Buffer;
  platform: 'fcm' | 'apns' | 'webpush';
  device_name: Generated<string>;
  enabled: Generated<boolean>;
  registered_at: Timestamp;
  last_used_at: Date | null;
  created_at: Generated<Date>;
}

export interface GatewayDatabase {
  gateway_outbox: OutboxTable;
  users: UsersTable;
  groups: GroupsTable;
  user_groups: UserGroupsTable;
  auth_tokens: AuthTokensTable;
  refresh_tokens: RefreshTokensTable;
  auth_failures: AuthFailuresTable;
  push_tokens: PushTokensTable;
}
