/**
 * The fan-out floor (`floor.ts`): what a delivery costs on this machine when it goes the way
 * the fan-out's does (one durable pull consumer per webhook on a JetStream stream, read by proto's
 * delivery loop with up to `FLOOR_CONCURRENCY` in flight each, the event's body POSTed over
 * keep-alive connections, the fan-out's acknowledgement batching) with none of the fan-out's
 * work: no webhook row, rights, signature, attempt log or retry schedule; of the event only the
 * body is read.
 *
 * Environment: NATS_URL, FLOOR_STREAM and FLOOR_SUBJECT (created here), FLOOR_URLS (a JSON
 * array: one webhook per URL), FLOOR_CONCURRENCY. Prints `fanout-floor ready` on stdout once
 * every consumer is pulling.
 */
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { createAckBatcher, startConsumerLoop } from '@switchboard/fanout';
import { connectNats, createLogger } from '@switchboard/kit';
import { Pool } from 'undici';
import { z } from 'zod';
import { floorStreamConfig } from '../floor-processes.ts';

const env = z
  .object({
    NATS_URL: z.string().min(1),
    FLOOR_STREAM: z.string().regex(/^[A-Za-z0-9_-]+$/),
    FLOOR_SUBJECT: z.string().min(1),
    FLOOR_URLS: z.string().transform((s) => z.array(z.url()).min(1).parse(JSON.parse(s))),
    FLOOR_CONCURRENCY: z.coerce.number().int().positive(),
  })
  .parse(process.env);

const nc = await connectNats(env.NATS_URL, 'fanout-floor');
const jsm = await jetstreamManager(nc);
const js = jetstream(nc);
// As the instance's events stream, under a name of its own.
await jsm.streams.add(floorStreamConfig('events', env.FLOOR_STREAM, env.FLOOR_SUBJECT));

/** The event's body, as the fan-out POSTs it. */
const Event = z.object({ body: z.string() });
// The fan-out's own acknowledgement batching, shared by every webhook's loop as there.
const acks = createAckBatcher();
const log = createLogger('fanout-floor', 'warn');

await Promise.all(
  env.FLOOR_URLS.map(async (url, i) => {
    const durable = `floor_${i}`;
    await jsm.consumers.add(env.FLOOR_STREAM, {
      durable_name: durable,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.New,
      filter_subject: env.FLOOR_SUBJECT,
      max_ack_pending: env.FLOOR_CONCURRENCY,
    });
    const target = new URL(url);
    const pool = new Pool(target.origin, { connections: env.FLOOR_CONCURRENCY });
    // The fan-out's own consumer loop (proto's delivery loop over `consume`, sized as there).
    await startConsumerLoop({
      js,
      stream: env.FLOOR_STREAM,
      durable,
      schema: Event,
      maxMessages: env.FLOOR_CONCURRENCY,
      handlerRetryMs: 5_000,
      ackWaitMs: 30_000,
      acks,
      log,
      handle: async ({ body }) => {
        const res = await pool.request({
          method: 'POST',
          path: target.pathname,
          body,
          headers: { 'content-type': 'application/json' },
        });
        await res.body.dump();
        return res.statusCode < 300 ? { kind: 'ack' } : { kind: 'nak', delayMs: 1_000 };
      },
    });
  }),
);
process.stdout.write('fanout-floor ready\n');
