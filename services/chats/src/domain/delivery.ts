import { messagesWebhookBody } from '@switchboard/proto';
import { nowSeconds } from './clock.ts';
import type { RetryPolicy } from './retry.ts';

/** Delay before retrying a send the network could not take (outage, throttling). */
export function redeliveryDelayMs(attempt: number, retryAfterMs: number | undefined): number {
  const backoff = Math.min(10 * 60_000, 2_000 * 2 ** Math.min(attempt - 1, 10));
  return Math.max(backoff, retryAfterMs ?? 0);
}

/** Network attempts before a send is given up as failed: about two days at the 10-minute cap. */
export const MAX_SEND_ATTEMPTS = 300;
/** How long a worker's claim on a send lasts without renewal: a dead worker's claim lapses by then. */
export const LEASE_SECONDS = 8;
export const LEASE_RENEW_MS = 2_000;
/** How often a later send checks whether the earlier one to the same customer is done. */
export const FOLLOWER_POLL_MS = 500;
/** An earlier send this late past its due time has lost its own command: a later one takes it over. */
export const STALE_HEAD_SECONDS = 30;
/** Database or NATS failures of the worker itself: retried without limit. */
export const WORKER_RETRY: RetryPolicy = {
  baseDelayMs: 1_000,
  maxDelayMs: 30_000,
  unknownAttempts: Number.POSITIVE_INFINITY,
  jitter: 0.2,
};

export const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, Math.ceil(v)));

/** A failed-status body in the network's own shape, so the fan-out delivers rejections like any status. */
export function failedStatusBody(
  phoneNumber: string,
  messageId: string,
  waId: string,
  errors: unknown[],
): string {
  const number = { wabaId: 'switchboard', displayPhoneNumber: phoneNumber, phoneNumberId: phoneNumber };
  const status = {
    id: messageId,
    status: 'failed',
    timestamp: String(nowSeconds()),
    recipient_id: waId,
    errors,
  };
  return JSON.stringify(messagesWebhookBody(number, { statuses: [status] }));
}
