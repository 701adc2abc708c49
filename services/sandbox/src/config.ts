import { randomBytes } from 'node:crypto';
import { configLoader, envBoolean, envPort, logLevel } from '@switchboard/kit';
import { z } from 'zod';

const Ms = z.coerce
  .number()
  .int()
  .min(0)
  .max(7 * 24 * 3600 * 1000);
const Rate = z.coerce.number().min(0).max(1);
const Digits = z.string().regex(/^\d{5,20}$/, 'digits only');

/** Meta retries undelivered webhooks for days with growing gaps; this schedule spans 7 days. */
export const DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS = [
  5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000, 10_800_000, 21_600_000, 43_200_000, 86_400_000,
  86_400_000, 86_400_000, 86_400_000, 86_400_000, 86_400_000, 86_400_000,
];

const Schedule = z
  .string()
  .regex(/^\s*\d+(\s*,\s*\d+)*\s*$/, 'comma-separated milliseconds')
  .transform((s) => s.split(',').map((n) => Number(n.trim())));

export const SandboxConfigSchema = z.object({
  HOST: z.string().default('127.0.0.1'),
  PORT: envPort.default(8090),
  LOG_LEVEL: logLevel,
  /** Base URL written into media download URLs; by default the Host the request came in on. */
  SANDBOX_PUBLIC_URL: z.url().optional(),
  SANDBOX_SEED_DISPLAY_PHONE_NUMBER: Digits.default('15550001234'),
  SANDBOX_SEED_PHONE_NUMBER_ID: Digits.default('100000000000001'),
  SANDBOX_SEED_WABA_ID: Digits.default('200000000000001'),
  /** The default number's provider API key; random per start when unset. */
  SANDBOX_SEED_API_KEY: z.string().min(8).optional(),
  /** The default number's app secret for `X-Hub-Signature-256`; random per start when unset. */
  SANDBOX_SEED_WEBHOOK_SECRET: z.string().min(8).optional(),
  SANDBOX_SEED_WEBHOOK_URL: z.url().optional(),
  SANDBOX_STATUS_SENT_DELAY_MS: Ms.default(300),
  SANDBOX_STATUS_DELIVERED_DELAY_MS: Ms.default(700),
  SANDBOX_STATUS_READ_DELAY_MS: Ms.default(1500),
  /** Share of messages whose `read` arrives without a `delivered` before it. */
  SANDBOX_READ_WITHOUT_DELIVERED_RATE: Rate.default(0.1),
  /** Share of status webhooks posted twice. */
  SANDBOX_DUPLICATE_STATUS_RATE: Rate.default(0),
  /** Messages per second per number before 130429; 0 turns the limit off. */
  SANDBOX_RATE_LIMIT_PER_SECOND: z.coerce.number().int().min(0).default(0),
  SANDBOX_TEMPLATE_OPENS_WINDOW: envBoolean.default(false),
  SANDBOX_WEBHOOK_RETRY_SCHEDULE_MS: Schedule.optional(),
  SANDBOX_WEBHOOK_TIMEOUT_MS: Ms.default(10_000),
  SANDBOX_MEDIA_URL_TTL_SECONDS: z.coerce.number().int().min(1).default(300),
  SANDBOX_MEDIA_LINK_TIMEOUT_MS: Ms.default(10_000),
});

export type SandboxEnv = z.infer<typeof SandboxConfigSchema>;

/** How each new number behaves until the control API changes it. */
export interface NumberBehaviour {
  statusDelaysMs: { sent: number; delivered: number; read: number };
  readWithoutDeliveredRate: number;
  duplicateStatusRate: number;
  /** 0 = unlimited. */
  rateLimitPerSecond: number;
  /** Meta opens the customer service window only on customer messages; the inbox spec also lets a template open it. */
  templateOpensWindow: boolean;
}

export interface SeedNumber {
  displayPhoneNumber: string;
  phoneNumberId: string;
  wabaId: string;
  apiKey: string;
  webhookSecret: string;
  webhookUrl: string | undefined;
}

/** Everything the sandbox needs besides a logger, in the shape tests and `npm start` fill in. */
export interface SandboxSettings {
  publicUrl: string | undefined;
  seed: SeedNumber | undefined;
  behaviour: NumberBehaviour;
  webhookRetryScheduleMs: readonly number[];
  webhookTimeoutMs: number;
  mediaUrlTtlSeconds: number;
  mediaLinkTimeoutMs: number;
}

export function randomSecret(prefix: string): string {
  return `${prefix}${randomBytes(18).toString('base64url')}`;
}

export function settingsFromEnv(env: SandboxEnv): SandboxSettings {
  return {
    publicUrl: env.SANDBOX_PUBLIC_URL,
    seed: {
      displayPhoneNumber: env.SANDBOX_SEED_DISPLAY_PHONE_NUMBER,
      phoneNumberId: env.SANDBOX_SEED_PHONE_NUMBER_ID,
      wabaId: env.SANDBOX_SEED_WABA_ID,
      apiKey: env.SANDBOX_SEED_API_KEY ?? randomSecret('sbx_'),
      webhookSecret: env.SANDBOX_SEED_WEBHOOK_SECRET ?? randomSecret('sbxs_'),
      webhookUrl: env.SANDBOX_SEED_WEBHOOK_URL,
    },
    behaviour: {
      statusDelaysMs: {
        sent: env.SANDBOX_STATUS_SENT_DELAY_MS,
        delivered: env.SANDBOX_STATUS_DELIVERED_DELAY_MS,
        read: env.SANDBOX_STATUS_READ_DELAY_MS,
      },
      readWithoutDeliveredRate: env.SANDBOX_READ_WITHOUT_DELIVERED_RATE,
      duplicateStatusRate: env.SANDBOX_DUPLICATE_STATUS_RATE,
      rateLimitPerSecond: env.SANDBOX_RATE_LIMIT_PER_SECOND,
      templateOpensWindow: env.SANDBOX_TEMPLATE_OPENS_WINDOW,
    },
    webhookRetryScheduleMs: env.SANDBOX_WEBHOOK_RETRY_SCHEDULE_MS ?? DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS,
    webhookTimeoutMs: env.SANDBOX_WEBHOOK_TIMEOUT_MS,
    mediaUrlTtlSeconds: env.SANDBOX_MEDIA_URL_TTL_SECONDS,
    mediaLinkTimeoutMs: env.SANDBOX_MEDIA_LINK_TIMEOUT_MS,
  };
}

export const loadConfig = configLoader(SandboxConfigSchema);
