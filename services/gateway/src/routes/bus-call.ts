import { randomUUID } from 'node:crypto';
import { type RpcContract, ServiceError } from '@switchboard/proto';
import type { Bus } from '@switchboard/proto/bus';
import type { z } from 'zod';

/**
 * The gateway's one way to ask another service. `bus.request` already answers every failure as
 * a `ServiceError` from the catalogue (the service's own error; `internal_error` when it failed
 * or broke its contract, logged there; `service_unavailable` when nobody answered in time), so
 * the inbox error handler shows it as it is.
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
  opts: { timeoutMs?: number } = {},
): Promise<z.output<Res>> {
  let request = payload;
  let retryKey: Record<string, unknown> | undefined;
  const field = contract.retryKeyField;
  if (field && payload !== null && typeof payload === 'object') {
    const given = (payload as Record<string, unknown>)[field];
    const key = typeof given === 'string' && given !== '' ? given : randomUUID();
    request = { ...(payload as Record<string, unknown>), [field]: key } as z.input<Req>;
    retryKey = { idempotency_key: key };
  }
  try {
    return await bus.request(contract, request, { timeoutMs: opts.timeoutMs ?? 15_000 });
  } catch (err) {
    if (retryKey && err instanceof ServiceError && err.status >= 500) {
      throw new ServiceError(err.code, err.message, {
        details: { ...err.details, ...retryKey },
        ...(err.headers && { headers: err.headers }),
        cause: err,
      });
    }
    throw err;
  }
}
