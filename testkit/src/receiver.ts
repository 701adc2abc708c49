import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as the receiver got it. */
export interface ReceivedRequest {
  readonly method: string;
  /** Path and query as requested. */
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  /** When the body had arrived, on the receiver's clock (`Date.now()` unless `clock` is given). */
  readonly at: number;
  /** The event the body carries (`eventId` option; by default `entry[0].id` of a network body). */
  readonly eventId: string | undefined;
}

/** How the receiver answers one request. */
export interface Reply {
  /** Default 200. */
  status?: number;
  headers?: Record<string, string>;
  /** Default `ok` (none for 204 and 304), as text/plain unless `headers` say otherwise. */
  body?: string;
  /** Answer this late: a slow endpoint. */
  delayMs?: number;
}

/** Decides the answer to each request; `index` counts requests from 0 (since the last `reset`). */
export type ReplyFn = (request: ReceivedRequest, index: number) => Reply;

export interface ReceiverOptions {
  /** Default: 200 `ok` at once. */
  reply?: ReplyFn;
  /** Path of `url`; the receiver answers on every path. Default `/hook`. */
  path?: string;
  /** Reads the event id out of a body; default `entry[0].id` of a network-shaped JSON body. */
  eventId?: (body: string) => string | undefined;
  /** Clock of `at`, e.g. `() => performance.now()` to compare with a benchmark's own times. */
  clock?: () => number;
}

/** A real HTTP endpoint on 127.0.0.1 that records every request: a webhook receiver. */
export interface Receiver {
  /** `http://127.0.0.1:<port><path>`. */
  readonly url: string;
  readonly port: number;
  /** Every request, in arrival order. */
  readonly requests: ReceivedRequest[];
  /** Requests whose answer has been sent. */
  readonly answered: number;
  /** Requests being handled right now (waiting for a delayed answer), and the most at once. */
  readonly inFlight: number;
  readonly maxInFlight: number;
  /** Replaces how the receiver answers from now on. */
  setReply(reply: ReplyFn): void;
  /** The requests that carried this event. */
  forEvent(eventId: string): ReceivedRequest[];
  /** Forgets the requests and counts (not the reply function, nor answers still delayed). */
  reset(): void;
  /** Stops listening; answers still delayed are never sent. */
  close(): Promise<void>;
}

/** `entry[0].id` of a network webhook body: tests and benchmarks put their event id there. */
export function networkBodyEventId(body: string): string | undefined {
  try {
    const parsed = JSON.parse(body) as { entry?: Array<{ id?: unknown }> };
    const id = parsed.entry?.[0]?.id;
    return typeof id === 'string' ? id : undefined;
  } catch {
    return undefined;
  }
}

/** The Standard Webhooks headers of a received request, as `Webhook.verify` takes them. */
export function receivedWebhookHeaders(
  request: ReceivedRequest | undefined,
): Record<'webhook-id' | 'webhook-timestamp' | 'webhook-signature', string> {
  return {
    'webhook-id': String(request?.headers['webhook-id']),
    'webhook-timestamp': String(request?.headers['webhook-timestamp']),
    'webhook-signature': String(request?.headers['webhook-signature']),
  };
}

const NO_BODY = new Set([204, 304]);

/**
 * Starts a receiver. Pass a reply function, or options; by default every request is answered
 * 200 `ok` at once.
 */
export async function startReceiver(opts: ReplyFn | ReceiverOptions = {}): Promise<Receiver> {
  const options: ReceiverOptions = typeof opts === 'function' ? { reply: opts } : opts;
  let reply: ReplyFn = options.reply ?? (() => ({}));
  const eventIdOf = options.eventId ?? networkBodyEventId;
  const clock = options.clock ?? Date.now;
  const requests: ReceivedRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let answered = 0;
  let inFlight = 0;
  let maxInFlight = 0;

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const request: ReceivedRequest = {
        method: req.method ?? 'GET',
        path: req.url ?? '/',
        headers: req.headers,
        body,
        at: clock(),
        eventId: eventIdOf(body),
      };
      const index = requests.length;
      requests.push(request);
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      let answer: Reply;
      try {
        answer = reply(request, index);
      } catch (err) {
        // A broken reply function shows up as a failed request, not as a hanging one.
        answer = { status: 500, body: `reply function failed: ${String(err)}` };
      }
      const status = answer.status ?? 200;
      const send = () => {
        inFlight--;
        answered++;
        const headers = answer.headers ?? {};
        const typed = Object.keys(headers).some((h) => h.toLowerCase() === 'content-type');
        res.writeHead(status, typed ? headers : { 'content-type': 'text/plain', ...headers });
        res.end(NO_BODY.has(status) ? undefined : (answer.body ?? 'ok'));
      };
      if (!answer.delayMs) {
        send();
        return;
      }
      const timer = setTimeout(() => {
        timers.delete(timer);
        send();
      }, answer.delayMs);
      timers.add(timer);
    });
  });
  // Benchmarks keep their connections between bursts.
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${options.path ?? '/hook'}`,
    port,
    requests,
    get answered() {
      return answered;
    },
    get inFlight() {
      return inFlight;
    },
    get maxInFlight() {
      return maxInFlight;
    },
    setReply(next) {
      reply = next;
    },
    forEvent: (eventId) => requests.filter((r) => r.eventId === eventId),
    reset() {
      requests.length = 0;
      answered = 0;
      maxInFlight = inFlight;
    },
    async close() {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A URL on loopback nothing listens on: every connection is refused. */
export async function deadUrl(): Promise<string> {
  const r = await startReceiver();
  const { url } = r;
  await r.close();
  return url;
}
