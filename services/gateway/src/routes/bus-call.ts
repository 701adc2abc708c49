import { randomUUID } from 'node:crypto';
import { AppError } from '@switchboard/kit';
import { type Bus, BusRequestError, BusValidationError, type RpcContract } from '@switchboard/proto';
import type { z } from 'zod';

/** Codes of a serving process that failed on its own (a bug, its database), not of the request. */
const INTERNAL_CODES = new Set(['internal_error', 'invalid_reply', 'bad_reply']);

/**
 * A request to another service, with its typed errors turned into inbox errors (same status
 * and code, extra details such as a window expiry kept in the body):
 *
 * - the service failed unexpectedly (it logged why): 500 `internal_error`;
 * - no answer at all (no responder, timeout): 503 `service_unavailable`, the service is down.
 *
 * A contract with a `retryKeyField` (sending) always carries a key: the caller's, or one made
 * here. When the outcome is unknown (no answer in time: the service may have acted) or the
 * service failed, the error body names the key (`idempotency_key`), and a retry with it as
 * `Idempotency-Key` finds what the first request did instead of acting twice.
 */
export async function callService<Req extends z.ZodType, Res extends z.ZodType>(
  bus: Bus,
  contract: RpcContract<Req, Res>,
  payload: z.input<Req>,
): Promise<z.output<Res>> {
  let request = payload;
  let retryKey: Record<string, unknown> = {};
  const field = contract.retryKeyField;
  if (field && payload !== null && typeof payload === 'object') {
    const given = (payload as Record<string, unknown>)[field];
    const key = typeof given === 'string' && given !== '' ? given : randomUUID();
    request = { ...(payload as Record<string, unknown>), [field]: key } as z.input<Req>;
    retryKey = { idempotency_key: key };
  }
  try {
    return await bus.request(contract, request, { timeoutMs: 15_000 });
  } catch (err) {
    if (err instanceof BusRequestError) {
      if (INTERNAL_CODES.has(err.code)) {
        throw new AppError(500, 'internal_error', 'A backing service failed to handle the request.', {
          extra: retryKey,
        });
      }
      if (err.status >= 500) {
        throw new AppError(err.status, err.code, err.message, { extra: { ...err.details, ...retryKey } });
      }
      throw new AppError(err.status, err.code, err.message, err.details ? { extra: err.details } : {});
    }
    if (err instanceof BusValidationError) {
      // The service answered something its contract does not allow: a bug, not an outage.
      throw new AppError(500, 'internal_error', 'A backing service answered out of contract.', {
        extra: retryKey,
      });
    }
    throw new AppError(503, 'service_unavailable', 'A backing service is not answering; retry later.', {
      extra: retryKey,
    });
  }
}
