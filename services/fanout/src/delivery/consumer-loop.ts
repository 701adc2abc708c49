import type { JetStreamClient, JsMsg } from '@nats-io/jetstream';
import { context, type Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Logger } from '@switchboard/kit';
import { extractTraceContext } from '@switchboard/proto';
import type { z } from 'zod';
import type { AckBatcher } from './ack-batcher.ts';

const tracer = trace.getTracer('@switchboard/fanout');
const decoder = new TextDecoder();

/** What a delivery handler decided. `hold` leaves the message unacknowledged (its webhook was disabled). */
export type Disposition =
  | { kind: 'ack' }
  | { kind: 'nak'; delayMs: number }
  | { kind: 'term'; reason: string }
  | { kind: 'hold' };

export interface MessageContext {
  readonly seq: number;
  readonly deliveryCount: number;
  readonly span: Span;
}

export interface ConsumerLoop {
  stop(): Promise<void>;
  /** Settles when the loop has ended, whether stopped or broken. */
  readonly done: Promise<void>;
}

/** Delay before a delivery is retried after the handler itself failed (database down, a bug). */
const HANDLER_FAILURE_DELAY_MS = 5_000;

/**
 * Pulls one webhook durable and runs the handler for every message concurrently (the durable's
 * max_ack_pending bounds how many). Like proto's bus consumer, each message is handled inside a
 * CONSUMER span continuing the publisher's trace from the NATS headers, so the network webhook
 * POST, the chats processing and every delivery attempt (undici adds its client span) share one
 * trace. Not built on bus.consume because webhook durables are created with DeliverPolicy.New
 * and must never be re-created implicitly.
 */
export async function startConsumerLoop<S extends z.ZodType>(opts: {
  js: JetStreamClient;
  stream: string;
  durable: string;
  schema: S;
  maxMessages: number;
  acks: AckBatcher;
  log: Logger;
  handle: (payload: z.output<S>, ctx: MessageContext) => Promise<Disposition>;
}): Promise<ConsumerLoop> {
  const consumer = await opts.js.consumers.get(opts.stream, opts.durable);
  // The server never has more than max_ack_pending out; a larger pull batch only means fewer
  // pull requests on the wire.
  const messages = await consumer.consume({ max_messages: Math.max(256, opts.maxMessages * 16) });
  const inFlight = new Set<Promise<void>>();

  const settle = (m: JsMsg, d: Disposition, span: Span) => {
    if (d.kind === 'hold') return;
    if (d.kind === 'term') span.setAttribute('switchboard.term_reason', d.reason);
    opts.acks.add(() => {
      if (d.kind === 'ack') m.ack();
      else if (d.kind === 'nak') m.nak(d.delayMs);
      // nats-server 2.9 ignores a term that carries a reason: always send it bare.
      else m.term();
    });
  };

  const handle = (m: JsMsg): Promise<void> =>
    context.with(extractTraceContext(m.headers), () =>
      tracer.startActiveSpan(
        `process ${m.subject}`,
        {
          kind: SpanKind.CONSUMER,
          attributes: {
            'messaging.system': 'nats',
            'messaging.destination.name': m.subject,
            'messaging.consumer.group.name': opts.durable,
            'messaging.nats.delivery_count': m.info.deliveryCount,
          },
        },
        async (span) => {
          try {
            let value: unknown;
            try {
              value = JSON.parse(decoder.decode(m.data));
            } catch {
              value = undefined;
            }
            const parsed = opts.schema.safeParse(value);
            if (!parsed.success) {
              // A malformed message never becomes valid: drop it instead of retrying forever.
              span.setStatus({ code: SpanStatusCode.ERROR, message: 'message failed its schema' });
              opts.log.error({ durable: opts.durable, seq: m.seq }, 'malformed event terminated');
              m.term();
              return;
            }
            const d = await opts.handle(parsed.data, {
              seq: m.seq,
              deliveryCount: m.info.deliveryCount,
              span,
            });
            settle(m, d, span);
          } catch (err) {
            span.recordException(err as Error);
            span.setStatus({ code: SpanStatusCode.ERROR });
            opts.log.error({ err, durable: opts.durable, seq: m.seq }, 'delivery handler failed; retrying');
            m.nak(HANDLER_FAILURE_DELAY_MS);
          } finally {
            span.end();
          }
        },
      ),
    );

  const done = (async () => {
    try {
      for await (const m of messages) {
        const p = handle(m).finally(() => inFlight.delete(p));
        inFlight.add(p);
      }
    } catch (err) {
      // The supervisor's next reconcile starts a fresh loop if the webhook still wants one.
      opts.log.warn({ err, durable: opts.durable }, 'consumer loop ended');
    }
    await Promise.allSettled([...inFlight]);
    opts.acks.flush();
  })();

  return {
    done,
    async stop() {
      await messages.close();
      await done;
    },
  };
}
