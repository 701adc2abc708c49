import { NetworkFailure } from './failure.ts';
import { NetworkErrorCode } from './wire.ts';

/** Cloud API calls a fault may be kept for; unscoped faults fail whichever call comes next. */
export type FaultScope = 'media_download';

export interface Fault {
  readonly status: 429 | 500 | 502 | 503;
  readonly retryAfterSeconds: number | undefined;
  /** Only calls of this kind fail (e.g. the downloads of media URLs); any call when absent. */
  readonly only?: FaultScope | undefined;
  remaining: number;
}

/** The failure an injected fault answers with: the network's own codes for each status. */
export function faultFailure(fault: Fault): NetworkFailure {
  const opts = {
    status: fault.status,
    ...(fault.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: fault.retryAfterSeconds }),
  };
  if (fault.status === 429) {
    return new NetworkFailure(
      NetworkErrorCode.rateLimitHit,
      'Injected by the sandbox: throughput reached.',
      opts,
    );
  }
  if (fault.status === 500) {
    return new NetworkFailure(
      NetworkErrorCode.somethingWentWrong,
      'Injected by the sandbox: server error.',
      opts,
    );
  }
  return new NetworkFailure(
    NetworkErrorCode.apiService,
    'Injected by the sandbox: service unavailable.',
    opts,
  );
}

/**
 * Consumes one injected fault for a call, oldest first: the first unscoped one, or one scoped to
 * this kind of call; undefined when none applies.
 */
export function takeFault(queue: Fault[], call?: FaultScope): Fault | undefined {
  const index = queue.findIndex((f) => f.only === undefined || f.only === call);
  const fault = queue[index];
  if (!fault) return undefined;
  fault.remaining -= 1;
  if (fault.remaining <= 0) queue.splice(index, 1);
  return fault;
}
