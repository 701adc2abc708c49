import { BaseEnvSchema, envBoolean, envPort, parseEnv } from '@switchboard/kit';
import { z } from 'zod';

const seconds = z.coerce.number().int().positive();

export const GatewayConfigSchema = BaseEnvSchema.extend({
  HOST: z.string().default('127.0.0.1'),
  PORT: envPort.default(8000),
  /** Honour X-Forwarded-For (client address for login limits) when behind a proxy. */
  TRUST_PROXY: envBoolean.default(false),
  /** Public base URL of this inbox (links in responses and mails). Defaults to http://HOST:PORT. */
  PUBLIC_URL: z.url().optional(),
  /** Secret of the instance: auth tokens are encrypted with a key derived from it. Keep it stable. */
  INBOX_SECRET_KEY: z.string().min(32, 'use at least 32 random characters'),
  MAX_NUMBER_OF_SEATS: z.coerce.number().int().min(0).default(5),
  APP_IS_USER_AVAILABILITY_ENABLED: envBoolean.default(false),
  INBOX_SERVICE_NAME: z.string().min(1).default('Switchboard'),
  INBOX_FRONTEND_URL: z.url().optional(),
  INBOX_ADMIN_USERNAME: z.string().min(1).optional(),
  INBOX_ADMIN_EMAIL: z.email().optional(),
  INBOX_ADMIN_PASSWORD: z.string().min(1).optional(),
  INBOX_CONFIGURATOR_USERNAME: z.string().min(1).optional(),
  REFRESH_TOKEN_TTL_SECONDS: seconds.default(30 * 86_400),
  PASSWORDLESS_LINK_TTL_SECONDS: seconds.default(15 * 60),
  AUTH_MAX_FAILURES_PER_USERNAME: z.coerce.number().int().positive().default(5),
  AUTH_MAX_FAILURES_PER_ADDRESS: z.coerce.number().int().positive().default(20),
  AUTH_FAILURE_WINDOW_SECONDS: seconds.default(15 * 60),
  PASSWORDLESS_MAX_MAILS_PER_ADDRESS: z.coerce.number().int().positive().default(5),
  SMTP_URL: z
    .string()
    .regex(/^smtps?:\/\//, 'smtp:// or smtps:// URL')
    .optional(),
  MAIL_FROM: z.string().min(3).default('Switchboard <no-reply@switchboard.local>'),
  /** The network's app secret: when set, `X-Hub-Signature-256` is required and checked on every webhook POST. */
  WABA_WEBHOOK_SECRET: z.string().min(1).optional(),
  /** The media service's HTTP API, to which `media/` and `media/{id}/` are passed on. */
  MEDIA_URL: z.url().default('http://127.0.0.1:8010'),
  /** Echoed back in the Meta verify handshake (`hub.verify_token`). */
  WABA_VERIFY_TOKEN: z.string().min(1).optional(),
}).transform((c) => ({ ...c, PUBLIC_URL: c.PUBLIC_URL ?? `http://${c.HOST}:${c.PORT}` }));

export type GatewayConfig = z.infer<typeof GatewayConfigSchema>;

export function loadConfig(env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  return parseEnv(GatewayConfigSchema, env);
}
