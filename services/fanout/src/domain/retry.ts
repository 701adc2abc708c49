/**
 * The retry schedule. `schedule[n]` is the delay before attempt n + 1, so `schedule[0]` is the
 * first attempt (0: at once) and the schedule's length is the number of attempts.
 */
export interface RetryPolicy {
  readonly schedule: readonly number[];
  /** Each delay is spread by ±jitter (0.2 = ±20 %) so retries of a burst do not arrive together. */
  readonly jitter: number;
  /** Least delay after a timeout or a 429: the receiver is overloaded, hammering it helps nobody. */
  readonly throttleFloorMs: number;
  /** A Retry-After longer than this is cut to it, so a receiver cannot park an event forever. */
  readonly retryAfterCapMs: number;
}

export const DEFAULT_RETRY_SCHEDULE_MS: readonly number[] = [
  0,
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3_600_000,
  5 * 3_600_000,
  10 * 3_600_000,
  10 * 3_600_000,
];

export interface FailureHints {
  /** The failure says the receiver is overloaded (a timeout or HTTP 429). */
  readonly throttled: boolean;
  /** What the receiver's Retry-After asked for, in milliseconds from now. */
  readonly retryAfterMs: number | undefined;
}

export type RetryDecision = { kind: 'retry'; delayMs: number } | { kind: 'exhausted' };

export function withJitter(delayMs: number, jitter: number, random: () => number = Math.random): number {
  if (delayMs <= 0 || jitter <= 0) return Math.max(0, delayMs);
  const factor = 1 + (random() * 2 - 1) * jitter;
  return Math.max(0, Math.round(delayMs * factor));
}

/** What to do after attempt number `attempt` (1-based) failed. */
export function nextRetry(
  policy: RetryPolicy,
  attempt: number,
  hints: FailureHints,
  random: () => number = Math.random,
): RetryDecision {
  const base = policy.schedule[attempt];
  if (base === undefined) return { kind: 'exhausted' };
  let delayMs = withJitter(base, policy.jitter, random);
  if (hints.throttled) delayMs = Math.max(delayMs, policy.throttleFloorMs);
  if (hints.retryAfterMs !== undefined) {
    delayMs = Math.max(delayMs, Math.min(hints.retryAfterMs, policy.retryAfterCapMs));
  }
  return { kind: 'retry', delayMs };
}
