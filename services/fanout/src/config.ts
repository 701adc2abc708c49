import {
  BaseEnvSchema,
  configLoader,
  envBoolean,
  envDuration,
  envOptionalDuration,
  InstanceSecretKeySchema,
  parseDurationList,
} from '@switchboard/kit';
import { z } from 'zod';
import { DEFAULT_RETRY_SCHEDULE_MS } from './domain/retry.ts';
import {
  DEFAULT_ATTEMPT_TIMEOUT_MS,
  DEFAULT_HANDLER_RETRY_MS,
  type FanoutSettings,
} from './domain/settings.ts';

export const FanoutConfigSchema = BaseEnvSchema.extend({
  /** The instance secret: webhook secrets and static headers are sealed with a key derived from it. */
  INBOX_SECRET_KEY: InstanceSecretKeySchema,
  /** Optional: serves GET /healthz (database and NATS) for orchestrator probes. */
  HEALTH_PORT: z.coerce.number().int().min(1).max(65535).optional(),
  WEBHOOK_ALLOW_PRIVATE_TARGETS: envBoolean.default(false),
  WEBHOOK_ATTEMPT_TIMEOUT: envDuration(`${DEFAULT_ATTEMPT_TIMEOUT_MS}ms`),
  /** Defaults to the attempt timeout plus 15 s. */
  WEBHOOK_ACK_WAIT: envOptionalDuration,
  WEBHOOK_RETRY_SCHEDULE: z
    .string()
    .default(DEFAULT_RETRY_SCHEDULE_MS.map((ms) => `${ms}ms`).join(','))
    .transform((v, ctx) => {
      const list = parseDurationList(v);
      if (!list || list.length === 0 || list.length > 50) {
        ctx.addIssue({
          code: 'custom',
          message: 'expected 1 to 50 comma-separated durations, e.g. 0,5s,5m',
        });
        return z.NEVER;
      }
      return list;
    }),
  WEBHOOK_RETRY_JITTER: z.coerce.number().min(0).max(0.9).default(0.2),
  WEBHOOK_THROTTLE_MIN_DELAY: envDuration('60s'),
  WEBHOOK_RETRY_AFTER_MAX: envDuration('10h'),
  WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).max(1000).default(16),
  WEBHOOK_DISABLE_AFTER: envDuration('5d'),
  WEBHOOK_SECRET_ROTATION_GRACE: envDuration('24h'),
  WEBHOOK_CACHE_TTL: envDuration('5s'),
  WEBHOOK_RECONCILE_INTERVAL: envDuration('30s'),
  WEBHOOK_ATTEMPT_LOG_FLUSH: envDuration('250ms'),
}).superRefine((c, ctx) => {
  const ackWait = c.WEBHOOK_ACK_WAIT ?? c.WEBHOOK_ATTEMPT_TIMEOUT + 15_000;
  if (ackWait < c.WEBHOOK_ATTEMPT_TIMEOUT + 1_000) {
    ctx.addIssue({
      code: 'custom',
      path: ['WEBHOOK_ACK_WAIT'],
      message:
        'must exceed WEBHOOK_ATTEMPT_TIMEOUT by at least 1s, or attempts would be redelivered mid-flight',
    });
  }
});

export type FanoutConfig = z.infer<typeof FanoutConfigSchema>;

export const loadConfig = configLoader(FanoutConfigSchema);

export function settingsFromConfig(c: FanoutConfig): FanoutSettings {
  return {
    allowPrivateTargets: c.WEBHOOK_ALLOW_PRIVATE_TARGETS,
    attemptTimeoutMs: c.WEBHOOK_ATTEMPT_TIMEOUT,
    ackWaitMs: c.WEBHOOK_ACK_WAIT ?? c.WEBHOOK_ATTEMPT_TIMEOUT + 15_000,
    retry: {
      schedule: c.WEBHOOK_RETRY_SCHEDULE,
      jitter: c.WEBHOOK_RETRY_JITTER,
      throttleFloorMs: c.WEBHOOK_THROTTLE_MIN_DELAY,
      retryAfterCapMs: c.WEBHOOK_RETRY_AFTER_MAX,
    },
    concurrency: c.WEBHOOK_CONCURRENCY,
    disableAfterMs: c.WEBHOOK_DISABLE_AFTER,
    rotationGraceMs: c.WEBHOOK_SECRET_ROTATION_GRACE,
    webhookCacheTtlMs: c.WEBHOOK_CACHE_TTL,
    reconcileIntervalMs: c.WEBHOOK_RECONCILE_INTERVAL,
    attemptLog: { flushIntervalMs: c.WEBHOOK_ATTEMPT_LOG_FLUSH, maxBatch: 500 },
    handlerRetryMs: DEFAULT_HANDLER_RETRY_MS,
  };
}
