import type { FailureClass } from '@switchboard/proto';

/** How chats retries its own work (inbound bodies, the delivery worker's database writes). */
export interface RetryPolicy {
  /** First retry delay; doubles per attempt. */
  baseDelayMs: number;
  /** Longest delay between attempts: how late work resumes after an outage ends. */
  maxDelayMs: number;
  /** Attempts an `unknown` failure gets before it is treated as permanent. */
  unknownAttempts: number;
  /** ±share of random spread on each delay, so a backlog does not retry in lockstep. */
  jitter: number;
}

export const INBOUND_RETRY_POLICY: RetryPolicy = {
  baseDelayMs: 500,
  maxDelayMs: 30_000,
  unknownAttempts: 5,
  jitter: 0.2,
};

export type RetryDecision = { action: 'retry'; delayMs: number } | { action: 'give_up' };

/** Capped exponential backoff with jitter for the given attempt (1 for the first failure). */
export function backoffMs(attempt: number, policy: RetryPolicy, random: () => number = Math.random): number {
  const raw = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.min(Math.max(attempt - 1, 0), 20));
  const spread = raw * policy.jitter * (random() * 2 - 1);
  return Math.max(1, Math.round(Math.min(policy.maxDelayMs, raw + spread)));
}

/**
 * Transient failures are retried without limit (capped backoff), permanent ones are given up
 * at once, unknown ones after `unknownAttempts`.
 */
export function retryDecision(
  failure: FailureClass,
  attempt: number,
  policy: RetryPolicy = INBOUND_RETRY_POLICY,
  random: () => number = Math.random,
): RetryDecision {
  if (failure === 'permanent') return { action: 'give_up' };
  if (failure === 'unknown' && attempt >= policy.unknownAttempts) return { action: 'give_up' };
  return { action: 'retry', delayMs: backoffMs(attempt, policy, random) };
}
