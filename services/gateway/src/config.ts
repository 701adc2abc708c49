import { BaseEnvSchema, configLoader, envBoolean, envPort, envTrustProxy } from '@switchboard/kit';
import { z } from 'zod';

const seconds = z.coerce.number().int().positive();

export const GatewayConfigSchema = BaseEnvSchema.extend({
  HOST: z.string().default('127.0.0.1'),
  PORT: envPort.default(8000),
  /** Honour X-Forwarded-For (client address for login limits) when behind a proxy. */
  TRUST_PROXY: envTrustProxy,
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
  /**
   * How long a token's principal and a user's API object are reused without a database read;
   * 0 turns the caches off. Changes made through this gateway apply at once, rights changes
   * through another one as soon as its `events.identity` notice arrives, at worst after this.
   */
  IDENTITY_CACHE_TTL_MS: z.coerce.number().int().nonnegative().default(5_000),
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
  /** Push tokens not registered again within this many days stop receiving and are listed as expired. */
  PUSH_TOKEN_TTL_DAYS: z.coerce.number().int().positive().default(60),
  /** Notifications about messages older than this (a backlog after an outage) are not sent. */
  PUSH_MAX_AGE_SECONDS: seconds.default(300),
  /** VAPID key pair of the inbox (base64url, as `web-push generate-vapid-keys` prints): Web Push needs it. */
  VAPID_PUBLIC_KEY: z
    .string()
    .regex(/^[A-Za-z0-9_-]{86,88}$/, 'base64url of a P-256 public key')
    .optional(),
  VAPID_PRIVATE_KEY: z
    .string()
    .regex(/^[A-Za-z0-9_-]{42,44}$/, 'base64url of a P-256 private key')
    .optional(),
  /** Contact of the sender that push services may use: `mailto:` or an https URL. */
  VAPID_SUBJECT: z
    .string()
    .regex(/^(mailto:|https:\/\/)/)
    .default('mailto:push@switchboard.local'),
  /** Let push endpoints be private, loopback or link-local addresses (development and tests only). */
  PUSH_ALLOW_PRIVATE_TARGETS: envBoolean.default(false),
  /** Largest `chat_import/` request body (the export text plus its media as base64), in bytes. */
  CHAT_IMPORT_MAX_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(100 * 1024 * 1024),
}).transform((c) => ({ ...c, PUBLIC_URL: c.PUBLIC_URL ?? `http://${c.HOST}:${c.PORT}` }));

export type GatewayConfig = z.infer<typeof GatewayConfigSchema>;

export const loadConfig = configLoader(GatewayConfigSchema);
