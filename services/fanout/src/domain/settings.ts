import { DEFAULT_RETRY_SCHEDULE_MS, type RetryPolicy } from './retry.ts';

/** Everything the fan-out's behaviour depends on, in milliseconds; config.ts builds it from the environment. */
export interface FanoutSettings {
  /** Lets webhooks reach loopback, private and link-local addresses (tests, local development). */
  readonly allowPrivateTargets: boolean;
  /** One HTTP attempt, from connecting to the last byte of the response excerpt. */
  readonly attemptTimeoutMs: number;
  /** JetStream redelivers an attempt a crashed worker left unacknowledged after this long. */
  readonly ackWaitMs: number;
  readonly retry: RetryPolicy;
  /** In-flight deliveries per webhook across all fanout processes (1 for ordered webhooks). */
  readonly concurrency: number;
  /** A webhook failing without a single success for this long is disabled. */
  readonly disableAfterMs: number;
  /** How long the previous secret keeps signing after a rotation. */
  readonly rotationGraceMs: number;
  /**
   * How long a worker reuses a webhook row. Changes reach workers at once through lifecycle
   * events; this bounds staleness only when such an event is lost.
   */
  readonly webhookCacheTtlMs: number;
  /** Safety net behind the change notifications: full reconcile of consumers with the table. */
  readonly reconcileIntervalMs: number;
  readonly attemptLog: {
    readonly flushIntervalMs: number;
    readonly maxBatch: number;
  };
  /**
   * Delay before a delivery is handled again after the worker itself failed (database down, the
   * gateway not answering). Such a failure is no attempt: the webhook's schedule is not used up.
   */
  readonly handlerRetryMs: number;
}

export const DEFAULT_ATTEMPT_TIMEOUT_MS = 15_000;
export const DEFAULT_HANDLER_RETRY_MS = 5_000;

export function defaultSettings(overrides: Partial<FanoutSettings> = {}): FanoutSettings {
  const attemptTimeoutMs = overrides.attemptTimeoutMs ?? DEFAULT_ATTEMPT_TIMEOUT_MS;
  const base: FanoutSettings = {
    allowPrivateTargets: false,
    attemptTimeoutMs,
    ackWaitMs: attemptTimeoutMs + 15_000,
    retry: {
      schedule: DEFAULT_RETRY_SCHEDULE_MS,
      jitter: 0.2,
      throttleFloorMs: 60_000,
      retryAfterCapMs: Math.max(...DEFAULT_RETRY_SCHEDULE_MS),
    },
    concurrency: 16,
    disableAfterMs: 5 * 86_400_000,
    rotationGraceMs: 86_400_000,
    webhookCacheTtlMs: 5_000,
    reconcileIntervalMs: 30_000,
    attemptLog: { flushIntervalMs: 250, maxBatch: 500 },
    handlerRetryMs: DEFAULT_HANDLER_RETRY_MS,
  };
  return { ...base, ...overrides };
}
