import {
  AckPolicy,
  type ApiError,
  type Consumer,
  type ConsumerConfig,
  type ConsumerMessages,
  DeliverPolicy,
  JetStreamApiError,
  type JetStreamManager,
  type JsMsg,
  jetstream,
  jetstreamManager,
  type PubAck,
} from '@nats-io/jetstream';
import {
  type MsgHdrs,
  type NatsConnection,
  headers as natsHeaders,
  type Subscription,
} from '@nats-io/nats-core';
import { context, type Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { z } from 'zod';
import type { ConsumerContract, RpcContract, StreamContract } from './contracts.ts';
import { BusValidationError, isErrorCode, ServiceError } from './errors.ts';
import { classifyFailure, failedDependency } from './failures.ts';
import type { InstanceId } from './instance.ts';
import { createReplyMux, type ReplyMux } from './reply-mux.ts';
import { streamConfigs } from './stream-configs.ts';
import { streamName } from './streams.ts';
import { extractTraceContext, injectTraceContext } from './trace.ts';

const tracer = trace.getTracer('@switchboard/proto');
const encoder = new TextEncoder();
const decoder = new TextDecoder();

export const ERROR_HEADER = 'Nats-Service-Error';
export const ERROR_CODE_HEADER = 'Nats-Service-Error-Code';
const ERROR_STABLE_CODE_HEADER = 'Switchboard-Error-Code';
const ERROR_DETAILS_HEADER = 'Switchboard-Error-Details';

/** What a stream handler decides; returning nothing acknowledges. */
export type Disposition =
  | { kind: 'ack' }
  | { kind: 'nak'; delayMs: number }
  | { kind: 'term'; reason: string }
  /** Leave the message unacknowledged: it comes back after AckWait (e.g. its consumer is paused). */
  | { kind: 'hold' };

export interface DeliveryContext {
  readonly subject: string;
  readonly seq: number;
  readonly deliveryCount: number;
  /** When the stream stored the message (the server's clock). */
  readonly publishedAtMs: number;
  readonly headers: MsgHdrs | undefined;
  readonly span: Span;
  /** Extends the ack deadline for long work. */
  working(): void;
}

export interface ConsumeOptions {
  /** Delay before a delivery whose handler threw is retried. */
  retryDelayMs?: (deliveryCount: number) => number;
  /** Called for messages rejected before the handler (bad JSON or schema) and for handler errors. */
  onError?: (err: unknown, ctx: { subject: string; seq: number }) => void;
  /**
   * Called with the raw bytes of a message that is not JSON or breaks its schema, before it is
   * terminated (e.g. to keep it as a dead letter). When it throws, the message is retried
   * instead of terminated, so a malformed message is never dropped without a trace.
   */
  onMalformed?: (
    data: Uint8Array,
    err: BusValidationError,
    ctx: { subject: string; seq: number; deliveryCount: number },
  ) => Promise<void>;
  /** Called when pulling messages fails (connection lost, consumer missing); the pull is retried. */
  onPullError?: (err: unknown) => void;
}

/** Where a durable stands (`Bus.consumerState`). */
export interface ConsumerState {
  pending: number;
  ackPending: number;
  ackFloor: number;
}

/** Where a durable created now starts: its first message at or after this time, or this stream sequence. */
export type ConsumerStart = { time: Date } | { seq: number };

export interface BusConsumeOptions extends ConsumeOptions {
  /** Where a durable created now starts (the stream's first message when absent). */
  startAt?: ConsumerStart;
  /**
   * False: read the durable only if it exists, never create it (a missing one fails the call
   * with JetStream's not-found, `isNotFound`). True by default.
   */
  create?: boolean;
}

/** What a served operation reports when its handler fails with something other than an expected `ServiceError`. */
export type ServeErrorHandler = (err: unknown, ctx: { operation: string; subject: string }) => void;

export interface ServeOptions {
  /** Queue group (default: the operation's name), so a request reaches one process. */
  queue?: string;
  /** Unexpected failures of this handler (default: the bus's `onServeError`). */
  onError?: ServeErrorHandler;
}

export interface Consumption {
  stop(): Promise<void>;
  readonly done: Promise<void>;
}

export interface PublishOptions {
  /** Becomes `Nats-Msg-Id`: JetStream drops a second publish with the same key in the stream's window. */
  idempotencyKey?: string;
  headers?: Record<string, string>;
}

export interface Bus {
  readonly instance: InstanceId;
  /** True when the server answers a round trip within the timeout (health checks). */
  ping(timeoutMs?: number): Promise<boolean>;
  /** Resolves once everything written so far (acks, replies, notifications) reached the server. */
  flush(): Promise<void>;
  ensureStreams(): Promise<void>;
  /**
   * Creates the contract's durable when it is missing (from the stream's first message, or from
   * `startAt`) and brings its AckWait and MaxAckPending up to date when it exists.
   */
  ensureConsumer(c: ConsumerContract, opts?: { startAt?: ConsumerStart }): Promise<void>;
  /** Deletes the contract's durable, with its position; a missing one is no error. */
  deleteConsumer(c: ConsumerContract): Promise<void>;
  /**
   * Where the contract's durable stands: messages not yet delivered (`pending`), delivered but
   * not yet acknowledged (`ackPending`), and the stream sequence up to which every message it
   * was given is acknowledged (`ackFloor`); null when the durable does not exist.
   */
  consumerState(c: ConsumerContract): Promise<ConsumerState | null>;
  /** The sequence of the last message the contract's stream holds (0 when empty). */
  lastSequence(c: StreamContract): Promise<number>;
  publish<S extends z.ZodType>(
    c: StreamContract<S>,
    payload: z.input<S>,
    opts?: PublishOptions,
  ): Promise<PubAck>;
  consume<S extends z.ZodType>(
    c: ConsumerContract<S>,
    handler: (payload: z.output<S>, ctx: DeliveryContext) => Promise<Disposition | undefined>,
    opts?: BusConsumeOptions,
  ): Promise<Consumption>;
  request<Req extends z.ZodType, Res extends z.ZodType>(
    c: RpcContract<Req, Res>,
    payload: z.input<Req>,
    opts?: { timeoutMs?: number },
  ): Promise<z.output<Res>>;
  serve<Req extends z.ZodType, Res extends z.ZodType>(
    c: RpcContract<Req, Res>,
    handler: (payload: z.output<Req>) => Promise<z.input<Res>>,
    opts?: ServeOptions,
  ): Subscription;
  /**
   * Listens to a stream contract's subject as it is published, without a durable: for
   * notifications every process needs at once (cache invalidation, reconcile now). A message
   * that is not JSON or breaks the contract reaches the handler as `null`: something
   * happened, but not what.
   */
  subscribe<S extends z.ZodType>(
    c: StreamContract<S>,
    handler: (payload: z.output<S> | null) => void,
  ): Subscription;
}

function encode(value: unknown): Uint8Array {
  return encoder.encode(JSON.stringify(value));
}

function decodeJson(data: Uint8Array): { ok: true; value: unknown } | { ok: false; error: Error } {
  try {
    return { ok: true, value: JSON.parse(decoder.decode(data)) };
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error : new Error(String(error)) };
  }
}

/** The extra parts of a service error that travel in one header: details, fields, headers. */
interface ErrorExtras {
  details?: Record<string, unknown>;
  fields?: Record<string, string[]>;
  headers?: Record<string, string>;
}

function parseExtras(raw: string | undefined): ErrorExtras {
  if (!raw) return {};
  try {
    const v: unknown = JSON.parse(raw);
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as ErrorExtras) : {};
  } catch {
    return {};
  }
}

/** The service that serves a contract (`chats.messages.send` → `chats`), for 503 details. */
function serviceOf(contract: string): string {
  return contract.split('.')[0] ?? contract;
}

/**
 * What `request` throws: the service's own `ServiceError`; a contract broken on either side as
 * `internal_error` (a bug, not an outage); anything else (no responder, timeout, connection
 * lost) as `service_unavailable` naming the service. The original is the `cause`.
 */
function asServiceError(err: unknown, contract: string): ServiceError {
  if (err instanceof ServiceError) return err;
  if (err instanceof BusValidationError)
    return new ServiceError('internal_error', err.message, { cause: err });
  return ServiceError.unavailable(
    serviceOf(contract),
    `${serviceOf(contract)} is not answering; retry later.`,
    {
      cause: err,
    },
  );
}

function validate<S extends z.ZodType>(
  schema: S,
  value: unknown,
  contract: string,
  direction: BusValidationError['direction'],
): z.output<S> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new BusValidationError(contract, direction, parsed.error.issues);
  return parsed.data;
}

// nats-server 2.9 recognises only a bare `+TERM`; a term with a reason (`+TERM <reason>`,
// 2.10+) is silently ignored there and the message comes back after AckWait. So `term()`
// is always sent without a reason and the reason goes to the span instead.
const defaultRetryDelay = (deliveryCount: number): number => Math.min(30_000, 250 * 2 ** (deliveryCount - 1));

export interface BusOptions {
  /** Replicas of the instance's streams: 3 on a JetStream cluster, 1 (default) on one server. */
  streamReplicas?: number;
  /**
   * Unexpected failures inside request handlers this bus serves (anything but a `ServiceError`):
   * the caller only learns `internal_error`, so the serving process must log the cause.
   */
  onServeError?: ServeErrorHandler;
}

interface DeliveryLoopBase<S extends z.ZodType> extends ConsumeOptions {
  /** Contract name, for validation errors. */
  contract: string;
  durable: string;
  schema: S;
  handler: (payload: z.output<S>, ctx: DeliveryContext) => Promise<Disposition | undefined>;
  /** Handler failures before the message is terminated; unlimited when omitted. */
  maxDeliver?: number | undefined;
  /** How a decision reaches the server; at once by default (the fan-out batches them). */
  settle?: (m: JsMsg, d: Exclude<Disposition, { kind: 'hold' }>) => void;
  /**
   * Sends an in-progress signal for every message whose handler is still running at this
   * interval, so AckWait only ever expires for messages of a process that died.
   */
  heartbeatMs?: number;
}

export type DeliveryLoopOptions<S extends z.ZodType> = DeliveryLoopBase<S> &
  (
    | {
        /**
         * A started subscription (`consumer.consume()`): every message it yields is handled at
         * once, so the durable's max_ack_pending alone bounds the handlers.
         */
        messages: ConsumerMessages;
        fetchFrom?: never;
        concurrency?: never;
      }
    | {
        /**
         * Pull from this consumer only as many messages as there are free handlers: a message
         * waiting for a delayed nak holds a slot at the server but no handler here.
         */
        fetchFrom: Consumer;
        /** Handlers running at once. */
        concurrency: number;
        messages?: never;
      }
  );

/** How long one pull waits for messages before the next pull is issued. */
const PULL_EXPIRES_MS = 5_000;
/** Pause before pulling again after a failed pull (connection lost, consumer missing). */
const PULL_RETRY_MS = 1_000;

/** Sends a decision to the server (a term always bare: nats-server 2.9 ignores one with a reason). */
export function settleNow(m: JsMsg, d: Exclude<Disposition, { kind: 'hold' }>): void {
  if (d.kind === 'ack') m.ack();
  else if (d.kind === 'nak') m.nak(d.delayMs);
  else m.term();
}

/**
 * The one consumer loop of the project: every message is handled concurrently inside a
 * CONSUMER span continuing the publisher's trace, validated against its schema (malformed
 * messages are terminated and never reach the handler), and settled by what the handler
 * decides; a handler that throws is retried with backoff. `bus.consume` runs it on a contract's
 * durable, pulling only as many messages as it has free handlers; the fan-out runs it on
 * durables it manages itself, with a subscription of its own.
 */
export function runDeliveryLoop<S extends z.ZodType>(o: DeliveryLoopOptions<S>): Consumption {
  const retryDelay = o.retryDelayMs ?? defaultRetryDelay;
  const settle =
    o.settle ?? ((m: JsMsg, d: Exclude<Disposition, { kind: 'hold' }>) => atTurnEnd(() => settleNow(m, d)));
  const inFlight = new Set<Promise<void>>();

  const handle = (m: JsMsg): Promise<void> =>
    context.with(extractTraceContext(m.headers), () =>
      tracer.startActiveSpan(
        `process ${m.subject}`,
        {
          kind: SpanKind.CONSUMER,
          attributes: {
            'messaging.system': 'nats',
            'messaging.destination.name': m.subject,
            'messaging.consumer.group.name': o.durable,
            'messaging.nats.delivery_count': m.info.deliveryCount,
          },
        },
        async (span) => {
          const working = () => {
            try {
              m.working();
            } catch {
              // The connection is closing: the message comes back after AckWait.
            }
          };
          const heartbeat = o.heartbeatMs ? setInterval(working, o.heartbeatMs) : undefined;
          try {
            const decoded = decodeJson(m.data);
            const parsed = decoded.ok
              ? o.schema.safeParse(decoded.value)
              : ({ success: false, error: null } as const);
            if (!parsed.success) {
              // A malformed message will never become valid: terminate instead of redelivering.
              const err = new BusValidationError(
                o.contract,
                'consume',
                parsed.error
                  ? parsed.error.issues
                  : [{ code: 'custom', path: [], message: 'body is not JSON', input: undefined }],
              );
              span.recordException(err);
              span.setStatus({ code: SpanStatusCode.ERROR, message: err.message });
              o.onError?.(err, { subject: m.subject, seq: m.seq });
              if (o.onMalformed) {
                try {
                  await o.onMalformed(m.data, err, {
                    subject: m.subject,
                    seq: m.seq,
                    deliveryCount: m.info.deliveryCount,
                  });
                } catch (keepErr) {
                  // Not kept anywhere yet: try again rather than drop it.
                  o.onError?.(keepErr, { subject: m.subject, seq: m.seq });
                  m.nak(retryDelay(m.info.deliveryCount));
                  return;
                }
              }
              m.term();
              return;
            }
            const outcome = (await o.handler(parsed.data, {
              subject: m.subject,
              seq: m.seq,
              deliveryCount: m.info.deliveryCount,
              publishedAtMs: m.time.getTime(),
              headers: m.headers,
              span,
              working,
            })) ?? { kind: 'ack' };
            if (outcome.kind === 'hold') return;
            if (outcome.kind === 'term') span.setAttribute('switchboard.term_reason', outcome.reason);
            if (outcome.kind === 'nak') span.setAttribute('switchboard.nak_delay_ms', outcome.delayMs);
            settle(m, outcome);
          } catch (err) {
            span.recordException(err as Error);
            span.setStatus({ code: SpanStatusCode.ERROR });
            o.onError?.(err, { subject: m.subject, seq: m.seq });
            if (o.maxDeliver !== undefined && m.info.deliveryCount >= o.maxDeliver) m.term();
            else m.nak(retryDelay(m.info.deliveryCount));
          } finally {
            if (heartbeat) clearInterval(heartbeat);
            span.end();
          }
        },
      ),
    );

  // Wakes the pulling loop when a handler finishes or the loop is stopped.
  let wake: (() => void) | undefined;
  const signal = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  const nextSignal = (timeoutMs?: number) =>
    new Promise<void>((resolve) => {
      const timer = timeoutMs === undefined ? undefined : setTimeout(resolve, timeoutMs);
      wake = () => {
        if (timer) clearTimeout(timer);
        resolve();
      };
    });

  const start = (m: JsMsg) => {
    const p = handle(m).finally(() => {
      inFlight.delete(p);
      signal();
    });
    inFlight.add(p);
  };

  let stopping = false;
  let batch: ConsumerMessages | undefined;

  const pull = async (consumer: Consumer, concurrency: number) => {
    const limit = Math.max(1, concurrency);
    while (!stopping) {
      if (inFlight.size >= limit) {
        await nextSignal();
        continue;
      }
      try {
        batch = await consumer.fetch({ max_messages: limit - inFlight.size, expires: PULL_EXPIRES_MS });
        if (stopping) await batch.close();
        for await (const m of batch) start(m);
      } catch (err) {
        if (stopping) break;
        o.onPullError?.(err);
        await nextSignal(PULL_RETRY_MS);
      } finally {
        batch = undefined;
      }
    }
  };

  const done = (async () => {
    if (o.fetchFrom) await pull(o.fetchFrom, o.concurrency);
    else for await (const m of o.messages) start(m);
    await Promise.allSettled([...inFlight]);
  })();

  return {
    done,
    async stop() {
      stopping = true;
      signal();
      if (o.messages) await o.messages.close();
      else await batch?.close();
      await done;
    },
  };
}

let turnEnd: Array<() => void> = [];
/**
 * Runs `write` (an ack, a reply) at the end of this event-loop turn together with the others of
 * the turn, so they share one socket write (see `createWriteCoalescer`).
 */
export function atTurnEnd(write: () => void): void {
  turnEnd.push(write);
  if (turnEnd.length === 1)
    setImmediate(() => {
      const batch = turnEnd;
      turnEnd = [];
      for (const w of batch) {
        try {
          w();
        } catch {
          // The connection is closing: an ack comes back after AckWait, a caller times out.
        }
      }
    });
}

/**
 * Issues the NATS calls of one event-loop turn together. The client writes its socket once per
 * burst of commands issued in one synchronous run, but concurrent HTTP requests each publish
 * from their own callback, so each paid a socket write and a wake-up of nats-server: under
 * `bench:messaging` the gateway spent a quarter of its CPU in those writes. Deferring the calls
 * to the end of the turn (`setImmediate`, no timer) lets every request read in one turn share
 * one write; a lone call waits for nothing but the rest of its turn.
 */
export function createWriteCoalescer(): <T>(call: () => Promise<T>) => Promise<T> {
  let queued: Array<() => void> = [];
  const run = () => {
    const batch = queued;
    queued = [];
    for (const start of batch) start();
  };
  return <T>(call: () => Promise<T>) =>
    new Promise<T>((resolve, reject) => {
      queued.push(() => {
        try {
          call().then(resolve, reject);
        } catch (err) {
          reject(err);
        }
      });
      if (queued.length === 1) setImmediate(run);
    });
}

/** A JetStream API answer that the stream, consumer or message does not exist. */
export function isNotFound(err: unknown): boolean {
  return err instanceof JetStreamApiError && err.status === 404;
}

/**
 * Creates the durable `name` with `config` when it is missing, else brings its AckWait and
 * MaxAckPending to `limits` (the only settings that change in place). Another process may
 * create it between the read and the create: then it is read again, once.
 */
export async function ensureDurable(
  jsm: JetStreamManager,
  stream: string,
  name: string,
  config: Partial<ConsumerConfig>,
  limits: { ack_wait: number; max_ack_pending: number },
): Promise<void> {
  for (let round = 0; ; round++) {
    try {
      const info = await jsm.consumers.info(stream, name);
      if (
        info.config.ack_wait !== limits.ack_wait ||
        info.config.max_ack_pending !== limits.max_ack_pending
      ) {
        await jsm.consumers.update(stream, name, limits);
      }
      return;
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    try {
      await jsm.consumers.add(stream, { ...config, durable_name: name });
      return;
    } catch (err) {
      if (round > 0) throw err;
    }
  }
}

/** Deletes the durable `name`, with its position; a missing one is no error. */
export async function deleteDurable(jsm: JetStreamManager, stream: string, name: string): Promise<void> {
  try {
    await jsm.consumers.delete(stream, name);
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
}

/** True when the server answers a round trip within the timeout (health checks). */
export async function pingNats(nc: NatsConnection, timeoutMs = 2_000): Promise<boolean> {
  if (nc.isClosed() || nc.isDraining()) return false;
  let timer: NodeJS.Timeout | undefined;
  try {
    const timeout = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    return await Promise.race([nc.flush().then(() => true), timeout]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

/** JetStream's publish timeout (the client's default). */
const PUBLISH_TIMEOUT_MS = 5_000;

/** The stream's answer to a publish: its acknowledgement, or its refusal as the client's error. */
function pubAckOf(reply: { data: Uint8Array }): PubAck {
  const decoded = decodeJson(reply.data);
  const v = decoded.ok ? (decoded.value as Partial<PubAck> & { error?: ApiError }) : {};
  if (v.error) throw new JetStreamApiError(v.error);
  if (typeof v.stream !== 'string' || !v.stream || typeof v.seq !== 'number')
    throw new Error('JetStream answered a publish with something that is not an acknowledgement');
  return { stream: v.stream, seq: v.seq, duplicate: v.duplicate ?? false, domain: v.domain ?? '' };
}

/** A JetStream publish of bytes to a subject, resolving with the stream's acknowledgement. */
export type RawPublish = (subject: string, data: Uint8Array, headers?: MsgHdrs) => Promise<PubAck>;

/**
 * Publishes as the bus does: the reply through one reply inbox (`replies`), the calls of one
 * event-loop turn in one socket write (`coalesced`), the answer read by `pubAckOf`.
 */
function rawPublisher(replies: ReplyMux, coalesced: <T>(call: () => Promise<T>) => Promise<T>): RawPublish {
  return async (subject, data, headers) =>
    pubAckOf(
      await coalesced(() =>
        replies.request(subject, data, { ...(headers && { headers }), timeoutMs: PUBLISH_TIMEOUT_MS }),
      ),
    );
}

/**
 * Publishes to subjects no contract names, as the bus publishes to those it does, for tools
 * (the benches' floors, whose streams are their own).
 */
export function createRawPublisher(nc: NatsConnection): RawPublish {
  return rawPublisher(createReplyMux(nc), createWriteCoalescer());
}

export async function createBus(
  nc: NatsConnection,
  instance: InstanceId,
  opts: BusOptions = {},
): Promise<Bus> {
  const js = jetstream(nc);
  const jsm: JetStreamManager = await jetstreamManager(nc);

  async function ensureStreams(): Promise<void> {
    for (const cfg of streamConfigs(instance, opts.streamReplicas ?? 1)) {
      try {
        await jsm.streams.info(cfg.name);
        await jsm.streams.update(cfg.name, cfg);
      } catch (err) {
        if (isNotFound(err)) await jsm.streams.add(cfg);
        else throw err;
      }
    }
  }

  async function ensureConsumer(c: ConsumerContract, opts: { startAt?: ConsumerStart } = {}): Promise<void> {
    const start = opts.startAt;
    const limits = { ack_wait: c.ackWaitSeconds * 1_000_000_000, max_ack_pending: c.maxAckPending };
    await ensureDurable(
      jsm,
      streamName(instance, c.message.stream),
      c.durable,
      {
        ack_policy: AckPolicy.Explicit,
        ...(!start
          ? { deliver_policy: DeliverPolicy.All }
          : 'seq' in start
            ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: start.seq }
            : { deliver_policy: DeliverPolicy.StartTime, opt_start_time: start.time.toISOString() }),
        filter_subject: c.message.subject(instance),
        // Unlimited at the server: the attempt limit is enforced here, where the dead letter is recorded.
        max_deliver: -1,
        ...limits,
      },
      limits,
    );
  }

  const deleteConsumer = (c: ConsumerContract) =>
    deleteDurable(jsm, streamName(instance, c.message.stream), c.durable);

  async function consumerState(c: ConsumerContract): Promise<ConsumerState | null> {
    try {
      const info = await jsm.consumers.info(streamName(instance, c.message.stream), c.durable);
      return {
        pending: info.num_pending,
        ackPending: info.num_ack_pending,
        ackFloor: info.ack_floor.stream_seq,
      };
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  async function lastSequence(c: StreamContract): Promise<number> {
    return (await jsm.streams.info(streamName(instance, c.stream))).state.last_seq;
  }

  const coalesced = createWriteCoalescer();
  const replies = createReplyMux(nc);
  const rawPublish = rawPublisher(replies, coalesced);

  async function publish<S extends z.ZodType>(
    c: StreamContract<S>,
    payload: z.input<S>,
    opts: PublishOptions = {},
  ): Promise<PubAck> {
    const value = validate(c.schema, payload, c.name, 'publish');
    const subject = c.subject(instance);
    return tracer.startActiveSpan(
      `send ${subject}`,
      {
        kind: SpanKind.PRODUCER,
        attributes: { 'messaging.system': 'nats', 'messaging.destination.name': subject },
      },
      async (span) => {
        try {
          const h = natsHeaders();
          for (const [k, v] of Object.entries(opts.headers ?? {})) h.set(k, v);
          injectTraceContext(h);
          const data = encode(value);
          if (opts.idempotencyKey) h.set('Nats-Msg-Id', opts.idempotencyKey);
          const ack = await rawPublish(subject, data, h);
          span.setAttribute('messaging.nats.stream.sequence', ack.seq);
          span.setAttribute('messaging.nats.duplicate', ack.duplicate);
          return ack;
        } catch (err) {
          span.recordException(err as Error);
          span.setStatus({ code: SpanStatusCode.ERROR });
          throw err;
        } finally {
          span.end();
        }
      },
    );
  }

  async function consume<S extends z.ZodType>(
    c: ConsumerContract<S>,
    handler: (payload: z.output<S>, ctx: DeliveryContext) => Promise<Disposition | undefined>,
    opts: BusConsumeOptions = {},
  ): Promise<Consumption> {
    const { startAt, create = true, ...loopOptions } = opts;
    if (create) await ensureConsumer(c, startAt ? { startAt } : {});
    const consumer = await js.consumers.get(streamName(instance, c.message.stream), c.durable);
    const loop = runDeliveryLoop({
      fetchFrom: consumer,
      concurrency: c.concurrency ?? c.maxAckPending,
      contract: c.message.name,
      durable: c.durable,
      schema: c.message.schema,
      handler,
      maxDeliver: c.maxDeliver,
      // A live handler keeps its message however long it takes; only a dead process's
      // messages come back after AckWait.
      heartbeatMs: Math.max(500, Math.floor((c.ackWaitSeconds * 1000) / 3)),
      ...loopOptions,
    });
    return {
      done: loop.done,
      async stop() {
        await loop.stop();
        // Acks are fire-and-forget publishes, sent at the end of a turn: let the last ones be
        // written, then make sure they left before returning.
        await new Promise((resolve) => setImmediate(resolve));
        await nc.flush();
      },
    };
  }

  async function request<Req extends z.ZodType, Res extends z.ZodType>(
    c: RpcContract<Req, Res>,
    payload: z.input<Req>,
    opts: { timeoutMs?: number } = {},
  ): Promise<z.output<Res>> {
    const value = validate(c.request, payload, c.name, 'request');
    const subject = c.subject(instance);
    return tracer.startActiveSpan(`request ${subject}`, { kind: SpanKind.CLIENT }, async (span) => {
      try {
        const h = natsHeaders();
        injectTraceContext(h);
        const data = encode(value);
        const reply = await coalesced(() =>
          replies.request(subject, data, { timeoutMs: opts.timeoutMs ?? 10_000, headers: h }),
        );
        const errorText = reply.headers?.get(ERROR_HEADER);
        if (errorText) {
          const status = Number(reply.headers?.get(ERROR_CODE_HEADER) ?? 500);
          const code = reply.headers?.get(ERROR_STABLE_CODE_HEADER) ?? '';
          const extras = parseExtras(reply.headers?.get(ERROR_DETAILS_HEADER));
          const cause = new Error(`${c.name} answered ${status} ${code || '(no code)'}: ${errorText}`);
          // A code this build does not know is the other side's failure, not the caller's.
          throw isErrorCode(code)
            ? new ServiceError(code, errorText, { ...extras, cause })
            : new ServiceError('internal_error', undefined, { cause });
        }
        const decoded = decodeJson(reply.data);
        if (!decoded.ok) {
          throw new ServiceError('internal_error', `${c.name} answered something that is not JSON.`, {
            cause: decoded.error,
          });
        }
        return validate(c.response, decoded.value, c.name, 'reply');
      } catch (err) {
        span.recordException(err as Error);
        span.setStatus({ code: SpanStatusCode.ERROR });
        throw asServiceError(err, c.name);
      } finally {
        span.end();
      }
    });
  }

  function serve<Req extends z.ZodType, Res extends z.ZodType>(
    c: RpcContract<Req, Res>,
    handler: (payload: z.output<Req>) => Promise<z.input<Res>>,
    serveOpts: ServeOptions = {},
  ): Subscription {
    const subject = c.subject(instance);
    const onError = serveOpts.onError ?? opts.onServeError;
    const report = (err: unknown) => {
      try {
        onError?.(err, { operation: c.name, subject });
      } catch {
        // A failing reporter must not keep the caller from its answer.
      }
    };
    const fail = (respond: (data: Uint8Array, h: MsgHdrs) => boolean, e: ServiceError) => {
      const h = natsHeaders();
      h.set(ERROR_HEADER, e.message.replace(/[\r\n]+/g, ' ').slice(0, 500));
      h.set(ERROR_CODE_HEADER, String(e.status));
      h.set(ERROR_STABLE_CODE_HEADER, e.code);
      const extras: ErrorExtras = {
        ...(e.details && { details: e.details }),
        ...(e.fields && { fields: e.fields }),
        ...(e.headers && { headers: e.headers }),
      };
      if (Object.keys(extras).length) h.set(ERROR_DETAILS_HEADER, JSON.stringify(extras));
      respond(new Uint8Array(), h);
    };
    return nc.subscribe(subject, {
      queue: serveOpts.queue ?? c.name,
      callback: (err, msg) => {
        if (err) return;
        const respond = (data: Uint8Array, h: MsgHdrs) => {
          atTurnEnd(() => msg.respond(data, { headers: h }));
          return true;
        };
        const parent = extractTraceContext(msg.headers);
        void context.with(parent, () =>
          tracer.startActiveSpan(`process ${subject}`, { kind: SpanKind.SERVER }, async (span) => {
            try {
              const decoded = decodeJson(msg.data);
              const parsed = decoded.ok ? c.request.safeParse(decoded.value) : null;
              if (!parsed?.success) {
                const issues = parsed?.error.issues ?? [];
                const e = new BusValidationError(c.name, 'request', issues);
                // The caller broke the contract: its bug, reported to it as one.
                fail(
                  respond,
                  new ServiceError('internal_error', decoded.ok ? e.message : 'request is not JSON'),
                );
                return;
              }
              const result = await handler(parsed.data);
              const checked = c.response.safeParse(result);
              if (!checked.success) {
                const e = new BusValidationError(c.name, 'reply', checked.error.issues);
                span.recordException(e);
                span.setStatus({ code: SpanStatusCode.ERROR });
                report(e);
                fail(respond, new ServiceError('internal_error', e.message));
                return;
              }
              const answer = encode(checked.data);
              atTurnEnd(() => msg.respond(answer));
            } catch (e) {
              span.recordException(e as Error);
              span.setStatus({ code: SpanStatusCode.ERROR });
              if (e instanceof ServiceError && e.code !== 'internal_error') fail(respond, e);
              else {
                report(e);
                // Its database or NATS being down is an outage, not a bug: the caller may retry.
                const failure = classifyFailure(e);
                fail(
                  respond,
                  failure.class === 'transient'
                    ? ServiceError.unavailable(failedDependency(failure, 'database'))
                    : new ServiceError('internal_error'),
                );
              }
            } finally {
              span.end();
            }
          }),
        );
      },
    });
  }

  function subscribe<S extends z.ZodType>(
    c: StreamContract<S>,
    handler: (payload: z.output<S> | null) => void,
  ): Subscription {
    return nc.subscribe(c.subject(instance), {
      callback: (err, msg) => {
        if (err) return;
        const decoded = decodeJson(msg.data);
        const parsed = decoded.ok ? c.schema.safeParse(decoded.value) : null;
        handler(parsed?.success ? parsed.data : null);
      },
    });
  }

  const ping = (timeoutMs?: number) => pingNats(nc, timeoutMs);

  async function flush(): Promise<void> {
    // Replies and acks are written at the end of the turn (`atTurnEnd`): let them go first.
    await new Promise((resolve) => setImmediate(resolve));
    await nc.flush();
  }

  return {
    instance,
    ping,
    flush,
    ensureStreams,
    ensureConsumer,
    deleteConsumer,
    consumerState,
    lastSequence,
    publish,
    consume,
    request,
    serve,
    subscribe,
  };
}
