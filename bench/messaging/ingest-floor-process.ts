/**
 * One process of the ingest floor (`ingest-floor.ts`): the same process hand-overs as an
 * inbound webhook, with no work in between.
 *
 *   INGEST_FLOOR_ROLE=front:  HTTP `POST /floor` → a JetStream publish of the body (with a
 *                             message id, as the gateway's) → 200 after the PubAck
 *   INGEST_FLOOR_ROLE=folder: a durable pull consumer of that stream, pulled and bounded as chats
 *                             pulls its inbound durable; the bodies that arrived while the last
 *                             statement ran go into PostgreSQL in one statement, then each body's
 *                             event is published (with a PubAck) and the body acknowledged
 *
 * Both batch as the inbox does, with proto's pieces: the NATS calls of one event-loop turn share
 * one socket write, PubAcks come back through one reply inbox. What the inbox does on top
 * (validation, parsing, persons, chats, messages, statuses, the event log, tracing) is left out.
 *
 * Environment: INGEST_FLOOR_ROLE, NATS_URL, INGEST_FLOOR_PREFIX (subjects `<prefix>.in` and
 * `<prefix>.events`), INGEST_FLOOR_STREAMS (a JSON array: the inbound and the events stream's
 * names); the front also PORT, the folder DATABASE_URL. Prints `ingest-floor ready` on stdout
 * once it takes requests.
 */
import { createHash } from 'node:crypto';
import { AckPolicy, DeliverPolicy, type JsMsg, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { headers } from '@nats-io/nats-core';
import { connectNats } from '@switchboard/kit';
import { consumers, instanceId } from '@switchboard/proto';
import { atTurnEnd, createReplyMux, createWriteCoalescer, streamConfigs } from '@switchboard/proto/bus';
import Fastify from 'fastify';
import pg from 'pg';
import { z } from 'zod';

const env = z
  .discriminatedUnion('INGEST_FLOOR_ROLE', [
    z.object({ INGEST_FLOOR_ROLE: z.literal('front'), PORT: z.coerce.number().int().positive() }),
    z.object({ INGEST_FLOOR_ROLE: z.literal('folder'), DATABASE_URL: z.string().min(1) }),
  ])
  .and(
    z.object({
      NATS_URL: z.string().min(1),
      INGEST_FLOOR_PREFIX: z.string().regex(/^[a-z0-9_.]+$/),
      INGEST_FLOOR_STREAMS: z
        .string()
        .transform((s) => z.tuple([z.string().min(1), z.string().min(1)]).parse(JSON.parse(s))),
    }),
  )
  .parse(process.env);

const inSubject = `${env.INGEST_FLOOR_PREFIX}.in`;
const eventSubject = `${env.INGEST_FLOOR_PREFIX}.events`;
const [inboundStream, eventsStream] = env.INGEST_FLOOR_STREAMS;

const nc = await connectNats(env.NATS_URL, `ingest-floor-${env.INGEST_FLOOR_ROLE}`);
const replies = createReplyMux(nc);
const coalesced = createWriteCoalescer();
const encoder = new TextEncoder();
/** What JetStream answers a publish; an `error` instead means it was not stored. */
const PubAck = z.object({ stream: z.string(), seq: z.number(), duplicate: z.boolean().optional() });

/** A JetStream publish with a message id, answered by its PubAck, as proto's bus publishes. */
async function publish(subject: string, data: string, msgID: string): Promise<{ duplicate: boolean }> {
  const h = headers();
  h.set('Nats-Msg-Id', msgID);
  const reply = await coalesced(() =>
    replies.request(subject, encoder.encode(data), { headers: h, timeoutMs: 5_000 }),
  );
  return { duplicate: PubAck.parse(reply.json()).duplicate ?? false };
}

if (env.INGEST_FLOOR_ROLE === 'folder') {
  // The streams as the inbox's (file storage, the same duplicate window), under names of their own.
  const jsm = await jetstreamManager(nc);
  const configs = streamConfigs(instanceId('floor'));
  const like = (suffix: string) => {
    const config = configs.find((c) => c.name.endsWith(suffix));
    if (!config) throw new Error(`no stream configuration ending in ${suffix}`);
    return config;
  };
  await jsm.streams.add({ ...like('_inbound'), name: inboundStream, subjects: [inSubject] });
  await jsm.streams.add({ ...like('_events'), name: eventsStream, subjects: [eventSubject] });
  // Bounded as chats' inbound durable is: the server's slots and the handlers at once.
  const { maxAckPending, concurrency = maxAckPending } = consumers.chatsInbound;
  await jsm.consumers.add(inboundStream, {
    durable_name: 'floor',
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    max_ack_pending: maxAckPending,
  });
  const db = new pg.Client({ connectionString: env.DATABASE_URL });
  // A lost connection fails the statements in flight; the bench then times out and says so.
  db.on('error', () => undefined);
  await db.connect();
  await db.query('create table if not exists ingest_floor (seq bigint primary key, body text not null)');
  const insert = {
    name: 'ingest_floor_insert',
    text:
      'insert into ingest_floor (seq, body) select * from unnest($1::bigint[], $2::text[]) ' +
      'on conflict (seq) do nothing',
  };

  // chats' group commit: whatever arrived while a statement ran is stored by the next one (at
  // most 256 bodies), which starts as soon as that one commits.
  interface Waiting {
    m: JsMsg;
    stored: () => void;
    failed: (err: unknown) => void;
  }
  let queue: Waiting[] = [];
  let draining = false;
  const drain = async () => {
    while (queue.length) {
      const batch = queue.slice(0, 256);
      queue = queue.slice(batch.length);
      try {
        await db.query({ ...insert, values: [batch.map((w) => w.m.seq), batch.map((w) => w.m.string())] });
        for (const w of batch) w.stored();
      } catch (err) {
        for (const w of batch) w.failed(err);
      }
    }
    draining = false;
  };
  const store = (m: JsMsg) =>
    new Promise<void>((stored, failed) => {
      queue.push({ m, stored, failed });
      if (!draining) {
        draining = true;
        setImmediate(() => void drain());
      }
    });

  // chats' pulling: only as many messages as there are free handlers.
  let inFlight = 0;
  let wake: (() => void) | undefined;
  const handle = async (m: JsMsg) => {
    try {
      await store(m);
      const body = m.string();
      const id = createHash('sha256').update(body).digest('hex');
      await publish(eventSubject, JSON.stringify({ event_id: id, body }), id);
      atTurnEnd(() => m.ack());
    } catch {
      // The floor has no failures to handle under the bench: the body comes back in a second.
      m.nak(1_000);
    } finally {
      inFlight--;
      wake?.();
    }
  };
  const consumer = await jetstream(nc).consumers.get(inboundStream, 'floor');
  void (async () => {
    for (;;) {
      if (inFlight >= concurrency) {
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        wake = undefined;
        continue;
      }
      const batch = await consumer.fetch({ max_messages: concurrency - inFlight, expires: 5_000 });
      for await (const m of batch) {
        inFlight++;
        void handle(m);
      }
    }
  })();
} else {
  const app = Fastify({ logger: false, bodyLimit: 4 * 1024 * 1024 });
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => done(null, body));
  app.post('/floor', async (req) => {
    const body = z.string().parse(req.body);
    const ack = await publish(inSubject, body, createHash('sha256').update(body).digest('hex'));
    return { status: 'accepted', duplicate: ack.duplicate };
  });
  await app.listen({ host: '127.0.0.1', port: env.PORT });
}
process.stdout.write('ingest-floor ready\n');
