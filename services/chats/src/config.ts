import { BaseEnvSchema, configLoader, envBoolean, InstanceSecretKeySchema } from '@switchboard/kit';
import { PROVIDER_BASE_URL } from '@switchboard/proto/network';
import { z } from 'zod';

export const ChatsConfigSchema = BaseEnvSchema.extend({
  /** The provider's Cloud API (or the sandbox): same client, different base URL and key. */
  NETWORK_BASE_URL: z.url().default(PROVIDER_BASE_URL),
  NETWORK_API_KEY: z.string().min(1),
  /** The business number this instance serves (shown by `whatsapp_accounts/`). */
  WABA_PHONE_NUMBER: z
    .string()
    .regex(/^\d{5,20}$/)
    .default('0'),
  /** Public base URL of the inbox; when set, its webhook URL is registered with the network at start. */
  PUBLIC_URL: z.url().optional(),
  TEMPLATE_CACHE_SECONDS: z.coerce.number().int().positive().default(300),
  /**
   * The instance secret (the gateway's and fanout's): contact provider secrets are sealed with a
   * key derived from it. Without it, providers cannot be connected.
   */
  INBOX_SECRET_KEY: InstanceSecretKeySchema.optional(),
  /** How long a contact provider's answer is reused; 0 asks every time. */
  CONTACT_CACHE_SECONDS: z.coerce.number().int().min(0).max(3600).default(30),
  /** Let contact provider URLs reach private, loopback and link-local addresses (development and tests only). */
  CONTACT_PROVIDERS_ALLOW_PRIVATE_TARGETS: envBoolean.default(false),
  /**
   * Test hook, off unless set: `<wa_id>:<SQLSTATE>,…`. Storing an inbound body that names one
   * of these customers fails inside its transaction with that SQLSTATE (raised by PostgreSQL),
   * to exercise retries and dead letters. Never set it in production.
   */
  CHATS_TEST_FAIL_WA_IDS: z
    .string()
    .regex(/^(\d{1,20}:[0-9A-Z]{5})(,\d{1,20}:[0-9A-Z]{5})*$/, 'expected <wa_id>:<SQLSTATE>,…')
    .optional()
    .transform(
      (v) =>
        new Map(
          (v ? v.split(',') : []).map((pair) => {
            const [waId = '', code = ''] = pair.split(':');
            return [waId, code] as const;
          }),
        ),
    ),
});

export type ChatsConfig = z.infer<typeof ChatsConfigSchema>;

export const loadConfig = configLoader(ChatsConfigSchema);
