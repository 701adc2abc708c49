import type { SecretBox } from '@switchboard/kit';
import type { InstanceStatus } from '@switchboard/proto';
import type { ColumnType, Generated } from 'kysely';
import { z } from 'zod';

export interface PartnersTable {
  id: string;
  name: string;
  api_key_hash: string;
  webhook_secret_sealed: Buffer;
  created_at: Generated<Date>;
}

/** What the partner asked for, minus secrets (those are sealed in `secrets_sealed`). */
export interface InstanceSettings {
  admin_email: string | null;
  generate_activation: boolean;
  configurator_user_name: string | null;
  configurator_webhook_url: string | null;
  max_number_of_seats: number;
  env_var_overrides: Record<string, string>;
  /** With `channel_id`: the key is collected from the partner hub. */
  channel_requested: boolean;
}

/** Sealed as one JSON document with the provisioner's key; checked when opened. */
export const InstanceSecretsSchema = z.object({
  inbox_secret_key: z.string(),
  /** Generated at creation; empty once the admin set their own (activation). */
  admin_password: z.string(),
  /** Given at creation (without `channel_id`). */
  provider_api_key: z.string().nullable(),
  configurator_webhook_headers: z.record(z.string(), z.string()),
});
export type InstanceSecrets = z.infer<typeof InstanceSecretsSchema>;

export function openInstanceSecrets(box: SecretBox, sealed: Buffer): InstanceSecrets {
  return InstanceSecretsSchema.parse(JSON.parse(box.open(sealed)));
}

export interface InstancesTable {
  id: string;
  partner_id: string;
  subdomain: string;
  status: InstanceStatus;
  channel_id: string | null;
  phone_number_id: string | null;
  display_phone_number: string | null;
  settings: ColumnType<InstanceSettings, string, string>;
  secrets_sealed: Buffer;
  provider_key_sealed: Buffer | null;
  database_name: string;
  port: number | null;
  pid: number | null;
  allocated_at: Date | null;
  healthy_at: Date | null;
  token_sent_at: Date | null;
  token_attempts: Generated<number>;
  mail_sent_at: Date | null;
  mail_attempts: Generated<number>;
  failure: ColumnType<FailureRecord | null, string | null, string | null>;
  errors_sent_at: Date | null;
  errors_attempts: Generated<number>;
  created_at: Generated<Date>;
  ready_at: Date | null;
  deleted_at: Date | null;
}

export interface FailureRecord {
  code: number;
  details: string;
  parameters?: Record<string, string>;
}

export interface ActivationTokensTable {
  token_hash: string;
  instance_id: string;
  created_at: Generated<Date>;
  used_at: Date | null;
}

export interface ProvisionerDatabase {
  partners: PartnersTable;
  instances: InstancesTable;
  activation_tokens: ActivationTokensTable;
}
