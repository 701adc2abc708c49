/** Everything an instance's environment is made of. */
export interface InstanceEnvInput {
  instanceId: string;
  port: number;
  databaseUrl: string;
  natsUrl: string;
  natsStreamReplicas: number;
  networkBaseUrl: string;
  providerApiKey: string;
  displayPhoneNumber: string | null;
  /** The instance's own secret (tokens and webhook secrets are sealed with it). */
  secretKey: string;
  adminUsername: string;
  adminEmail: string | null;
  adminPassword: string;
  seats: number;
  /** Where the network posts the number's webhooks (the instance itself, reachable from the network). */
  publicUrl: string;
  overrides: Record<string, string>;
  extra: Record<string, string>;
}

/**
 * The single-process inbox's environment for one instance. The partner's overrides (already
 * checked against the allowlist) win over the defaults, the operator's extra settings over
 * nothing that makes the instance what it is: identity, database, bus, number and key.
 */
export function instanceEnvironment(i: InstanceEnvInput): Record<string, string> {
  return {
    ...i.extra,
    ...i.overrides,
    HOST: '127.0.0.1',
    PORT: String(i.port),
    PUBLIC_URL: i.publicUrl,
    INSTANCE_ID: i.instanceId,
    DATABASE_URL: i.databaseUrl,
    NATS_URL: i.natsUrl,
    NATS_STREAM_REPLICAS: String(i.natsStreamReplicas),
    NETWORK_BASE_URL: i.networkBaseUrl,
    NETWORK_API_KEY: i.providerApiKey,
    ...(i.displayPhoneNumber && /^\d{5,20}$/.test(i.displayPhoneNumber)
      ? { WABA_PHONE_NUMBER: i.displayPhoneNumber }
      : {}),
    INBOX_SECRET_KEY: i.secretKey,
    INBOX_ADMIN_USERNAME: i.adminUsername,
    ...(i.adminEmail ? { INBOX_ADMIN_EMAIL: i.adminEmail } : {}),
    // Empty once the admin set their own password (activation): the admin exists by then.
    ...(i.adminPassword ? { INBOX_ADMIN_PASSWORD: i.adminPassword } : {}),
    MAX_NUMBER_OF_SEATS: String(i.seats),
  };
}
