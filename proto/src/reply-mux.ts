import {
  createInbox,
  type Msg,
  type MsgHdrs,
  type NatsConnection,
  NoRespondersError,
  TimeoutError,
} from '@nats-io/nats-core';

export interface ReplyMux {
  /** Publishes `data` to `subject` with a reply subject of its own and resolves with the reply. */
  request(subject: string, data: Uint8Array, opts: { headers?: MsgHdrs; timeoutMs: number }): Promise<Msg>;
}

interface Waiting {
  resolve(m: Msg): void;
  reject(err: Error): void;
  deadline: number;
}

/** How often the deadlines of requests in flight are checked. */
const SWEEP_MS = 100;

/**
 * Request/reply over one wildcard inbox subscription, like the NATS client's own, without its
 * per-request costs: the client builds two Error objects (stack traces included) and a timer
 * for every request, even one answered at once; those were the largest function of their own
 * in the gateway's and chats' profiles under `bench:messaging`. Here a request is a map entry
 * and one shared sweep enforces the deadlines.
 *
 * Failures carry the client's own error names, so `classifyFailure` judges them alike:
 * `TimeoutError` when no reply came in time, `NoResponders` when nobody listens (nats-server
 * answers a 503 status to the reply subject).
 */
export function createReplyMux(nc: NatsConnection): ReplyMux {
  const prefix = `${createInbox()}.`;
  const waiting = new Map<string, Waiting>();
  let next = 0;
  let sweep: NodeJS.Timeout | undefined;

  nc.subscribe(`${prefix}*`, {
    callback: (_err, msg) => {
      const token = msg.subject.slice(prefix.length);
      const w = waiting.get(token);
      if (!w) return;
      waiting.delete(token);
      if (msg.headers?.code === 503) w.reject(new NoRespondersError(msg.subject));
      else w.resolve(msg);
    },
  });

  function expire(): void {
    const now = Date.now();
    for (const [token, w] of waiting) {
      if (w.deadline > now) continue;
      waiting.delete(token);
      w.reject(new TimeoutError());
    }
    if (!waiting.size) {
      clearInterval(sweep);
      sweep = undefined;
    }
  }

  return {
    request(subject, data, opts) {
      return new Promise<Msg>((resolve, reject) => {
        const token = (next++).toString(36);
        waiting.set(token, { resolve, reject, deadline: Date.now() + opts.timeoutMs });
        if (!sweep) {
          sweep = setInterval(expire, SWEEP_MS);
          sweep.unref();
        }
        try {
          nc.publish(subject, data, {
            reply: prefix + token,
            ...(opts.headers ? { headers: opts.headers } : {}),
          });
        } catch (err) {
          waiting.delete(token);
          reject(err instanceof Error ? err : new Error(String(err)));
        }
      });
    },
  };
}
