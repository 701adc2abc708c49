import { AppError } from '@switchboard/kit';
import { type Bus, BusRequestError, type RpcContract } from '@switchboard/proto';
import type { z } from 'zod';

/**
 * A request to another service, with its typed errors turned into inbox errors (same status
 * and code, extra details such as a window expiry kept in the body). No answer at all means
 * the service is down: 503, never a 500.
 */
export async function callService<Req extends z.ZodType, Res extends z.ZodType>(
  bus: Bus,
  contract: RpcContract<Req, Res>,
  payload: z.input<Req>,
): Promise<z.output<Res>> {
  try {
    return await bus.request(contract, payload, { timeoutMs: 15_000 });
  } catch (err) {
    if (err instanceof BusRequestError) {
      if (err.status >= 500)
        throw new AppError(503, 'service_unavailable', 'A backing service failed; retry later.');
      throw new AppError(err.status, err.code, err.message, err.details ? { extra: err.details } : {});
    }
    throw new AppError(503, 'service_unavailable', 'A backing service is not answering; retry later.');
  }
}
