import { NetworkFailure } from './failure.ts';
import { NetworkErrorCode } from './wire.ts';

export interface Fault {
  readonly status: 429 | 500 | 502 | 503;
  readonly retryAfterSeconds: number | undefined;
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

/** Consumes one injected fault, oldest first; undefined when none is pending. */
export function takeFault(queue: Fault[]): Fault | undefined {
  const head = queue[0];
  if (!head) return undefined;
  head.remaining -= 1;
  if (head.remaining <= 0) queue.shift();
  return head;
}
