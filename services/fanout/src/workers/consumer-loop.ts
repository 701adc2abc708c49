import type { JetStreamClient } from '@nats-io/jetstream';
import type { Span } from '@opentelemetry/api';
import type { Logger } from '@switchboard/kit';
import { type Disposition, runDeliveryLoop, settleNow } from '@switchboard/proto/bus';
import type { z } from 'zod';
import type { AckBatcher } from './ack-batcher.ts';

/** What a delivery handler decides; `hold` leaves the message unacknowledged (its webhook was disabled). */
export type { Disposition };

export interface MessageContext {
  readonly seq: number;
  readonly deliveryCount: number;
  readonly publishedAtMs: number;
  readonly span: Span;
}

export interface ConsumerLoop {
  stop(): Promise<void>;
  /** Settles when the loop has ended, whether stopped or broken. */
  readonly done: Promise<void>;
}

/**
 * Pulls one webhook durable through proto's delivery loop (consumer span continuing the
 * publisher's trace, schema validation, concurrent handling bounded by max_ack_pending), with
 * two differences that belong to the fan-out: decisions are sent in batches, and a failing
 * handler is retried without limit (the attempt limit is the webhook's schedule, in the
 * engine). Not `bus.consume`: webhook durables are created with DeliverPolicy.New by the
 * supervisor and must never be re-created implicitly.
 */
export async function startConsumerLoop<S extends z.ZodType>(opts: {
  js: JetStreamClient;
  stream: string;
  durable: string;
  schema: S;
  maxMessages: number;
  /** Delay before a message whose handler failed (database down, a bug) is handled again. */
  handlerRetryMs: number;
  /** The durable's AckWait: a message is marked in progress three times within it while handled. */
  ackWaitMs: number;
  acks: AckBatcher;
  log: Logger;
  handle: (payload: z.output<S>, ctx: MessageContext) => Promise<Disposition>;
}): Promise<ConsumerLoop> {
  const consumer = await opts.js.consumers.get(opts.stream, opts.durable);
  // The server never has more than max_ack_pending out; a larger pull batch only means fewer
  // pull requests on the wire.
  const messages = await consumer.consume({ max_messages: Math.max(256, opts.maxMessages * 16) });
  const loop = runDeliveryLoop({
    messages,
    contract: opts.durable,
    durable: opts.durable,
    schema: opts.schema,
    handler: (payload, ctx) => opts.handle(payload, ctx),
    retryDelayMs: () => opts.handlerRetryMs,
    // A handler waiting for the attempt log's commit after its POST must not outlive AckWait:
    // the event would be redelivered and POSTed again while the first is still being recorded.
    heartbeatMs: Math.max(500, Math.floor(opts.ackWaitMs / 3)),
    settle: (m, d) => opts.acks.add(() => settleNow(m, d)),
    onError: (err, at) => opts.log.error({ err, durable: opts.durable, seq: at.seq }, 'delivery not handled'),
  });
  const done = loop.done
    // The supervisor's next reconcile starts a fresh loop if the webhook still wants one.
    .catch((err: unknown) => opts.log.warn({ err, durable: opts.durable }, 'consumer loop ended'))
    .finally(() => opts.acks.flush());
  return {
    done,
    async stop() {
      await messages.close();
      await done;
    },
  };
}
