import { webhookConnector } from '@switchboard/kit';
import { Agent, type Dispatcher } from 'undici';
import { type AttemptResult, describeError, errorClassOf } from '../domain/outcome.ts';

export const RESPONSE_EXCERPT_BYTES = 4096;
const USER_AGENT = 'Switchboard-Webhooks/1.0';

export interface DeliveryClient {
  /** One POST, never throwing: every failure becomes an AttemptResult. */
  post(
    url: string,
    headers: Record<string, string>,
    body: string,
    timeoutMs?: number,
  ): Promise<AttemptResult>;
  close(): Promise<void>;
}

const utf8 = new TextDecoder();

/**
 * One attempt, driven by undici's dispatch callbacks rather than its `request()`: `request()`
 * wraps every response in a Readable stream and every callback in an AsyncResource, about 40 % of
 * the client's CPU per POST (a median of 32 against 18 µs, bench/fanout/README.md).
 * The attempt ends at the first of: the response's end, 4 KB of excerpt (the connection is then
 * dropped, so a huge or endless response costs 4 KB, not its size), an error, or the deadline.
 * The deadline runs from dispatch to the last byte of the excerpt, so a response that trickles in
 * ends there too, keeping what arrived; one that has not started by then is a timeout.
 */
class Attempt implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | null = null;
  private settled = false;
  private status = 0;
  private retryAfter: string | undefined;
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private readonly timer: NodeJS.Timeout;
  private readonly started = performance.now();
  private readonly timeoutMs: number;
  private readonly resolve: (result: AttemptResult) => void;

  constructor(timeoutMs: number, resolve: (result: AttemptResult) => void) {
    this.timeoutMs = timeoutMs;
    this.resolve = resolve;
    this.timer = setTimeout(() => this.expire(), timeoutMs);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    // A request that waited for a connection past its deadline is never sent.
    if (this.settled) controller.abort(new Error('attempt already ended'));
  }

  onResponseStart(
    _c: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, unknown>,
  ): void {
    if (statusCode < 200) return; // 1xx: the final response follows
    this.status = statusCode;
    const retryAfter = headers['retry-after'];
    this.retryAfter = Array.isArray(retryAfter)
      ? String(retryAfter[0])
      : typeof retryAfter === 'string'
        ? retryAfter
        : undefined;
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.status === 0 || this.settled) return;
    this.chunks.push(chunk);
    this.size += chunk.length;
    if (this.size >= RESPONSE_EXCERPT_BYTES) {
      this.finishWithResponse();
      // After undici's parser has finished the chunk: a response that ended within it keeps
      // its connection (the abort is then a no-op), an endless one loses it.
      queueMicrotask(() => controller.abort(new Error('response excerpt complete')));
    }
  }

  onResponseEnd(): void {
    this.finishWithResponse();
  }

  onResponseError(_c: Dispatcher.DispatchController | null, error: Error): void {
    // Errors after the end (the abort at 4 KB or at the deadline) change nothing.
    if (this.settled) return;
    // The receiver answered and the body was cut short: its status stands, the excerpt is shorter.
    if (this.status !== 0) {
      this.finishWithResponse();
      return;
    }
    this.finish({
      kind: 'error',
      errorClass: errorClassOf(error),
      message: describeError(error),
      durationMs: this.elapsed(),
    });
  }

  private expire(): void {
    if (this.settled) return;
    if (this.status !== 0) this.finishWithResponse();
    else
      this.finish({
        kind: 'error',
        errorClass: 'timeout',
        message: `no answer within the attempt timeout (${this.timeoutMs} ms)`,
        durationMs: this.elapsed(),
      });
    this.controller?.abort(new Error('attempt deadline'));
  }

  private finishWithResponse(): void {
    this.finish({
      kind: 'response',
      status: this.status,
      retryAfter: this.retryAfter,
      excerpt: utf8.decode(Buffer.concat(this.chunks).subarray(0, RESPONSE_EXCERPT_BYTES)),
      durationMs: this.elapsed(),
    });
  }

  private finish(result: AttemptResult): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    this.resolve(result);
  }

  private elapsed(): number {
    return Math.round(performance.now() - this.started);
  }
}

/**
 * POSTs deliveries through one undici Agent: keep-alive pools per origin, redirects never
 * followed (a 3xx is a failed attempt), and the SSRF guard at connect time.
 */
export function createDeliveryClient(opts: {
  allowPrivateTargets: boolean;
  attemptTimeoutMs: number;
}): DeliveryClient {
  const agent = new Agent({
    connect: webhookConnector({
      allowPrivateTargets: opts.allowPrivateTargets,
      connectTimeoutMs: Math.min(opts.attemptTimeoutMs, 10_000),
    }),
    keepAliveTimeout: 10_000,
    keepAliveMaxTimeout: 60_000,
    headersTimeout: opts.attemptTimeoutMs,
    bodyTimeout: opts.attemptTimeoutMs,
  });

  function post(
    url: string,
    headers: Record<string, string>,
    body: string,
    timeoutMs = opts.attemptTimeoutMs,
  ): Promise<AttemptResult> {
    return new Promise((resolve) => {
      const attempt = new Attempt(timeoutMs, resolve);
      let target: URL;
      try {
        target = new URL(url);
      } catch (err) {
        attempt.onResponseError(null, err instanceof Error ? err : new Error(String(err)));
        return;
      }
      // A failure to dispatch (a URL that is not http(s), a header undici refuses) reaches
      // onResponseError too.
      agent.dispatch(
        {
          origin: target.origin,
          path: `${target.pathname}${target.search}`,
          method: 'POST',
          headers: { 'user-agent': USER_AGENT, ...headers },
          body,
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
        },
        attempt,
      );
    });
  }

  return { post, close: () => agent.close() };
}
