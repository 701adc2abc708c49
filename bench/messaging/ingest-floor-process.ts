/**
 * One process of the ingest floor (`ingest-floor.ts`): the same process hand-overs as an
 * inbound webhook, with no work in between.
 *
 *   INGEST_FLOOR_ROLE=front:  HTTP `POST /floor` → a JetStream publish of the body in an envelope
 *                             (with a message id, as the gateway's) → 200 after the PubAck
 *   INGEST_FLOOR_ROLE=folder: a durable of that stream read by proto's delivery loop, bounded as
 *                             chats reads its inbound durable; the bodies go into PostgreSQL
 *                             through chats' group commit (those that arrived while a statement
 *                             ran, in the next one), then each body's event is published (with a
 *                             PubAck) and the body acknowledged
 *
 * The pieces are the inbox's own: proto's delivery loop and publishing, chats' group commit. What
 * the inbox does on top (parsing the body, persons, chats, messages, statuses, the event log) is
 * left out.
 *
 * Environment: INGEST_FLOOR_ROLE, NATS_URL, INGEST_FLOOR_PREFIX (subjects `<prefix>.in` and
 * `<prefix>.events`), INGEST_FLOOR_STREAMS (a JSON array: the inbound and the events stream's
 * names); the front also PORT, the folder DATABASE_URL. Prints `ingest-floor ready` on stdout
 * once it takes requests.
 */
import { createHash } from 'node:crypto';
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { headers } from '@nats-io/nats-core';
import { createGroupCommit } from '@switchboard/chats';
import { connectNats } from '@switchboard/kit';
import { consumers } from '@switchboard/proto';
import { createRawPublisher, runDeliveryLoop } from '@switchboard/proto/bus';
import Fastify from 'fastify';
import pg from 'pg';
import { z } from 'zod';
import { floorStreamConfig } from '../floor-processes.ts';

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
const rawPublish = createRawPublisher(nc);
const utf8 = new TextEncoder();
/** Publishes `text` under the message id `msgId`, as the gateway and chats publish theirs. */
const publish = (subject: string, text: string, msgId: string) => {
  const h = headers();
  h.set('Nats-Msg-Id', msgId);
  return rawPublish(subject, utf8.encode(text), h);
};
/** What the front puts on the stream, as the gateway wraps a network body. */
const Envelope = z.object({ body: z.string() });

if (env.INGEST_FLOOR_ROLE === 'folder') {
  // The streams as the inbox's (file storage, the same duplicate window), under names of their own.
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add(floorStreamConfig('inbound', inboundStream, inSubject));
  await jsm.streams.add(floorStreamConfig('events', eventsStream, eventSubject));
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
  const stored = createGroupCommit<{ seq: number; body: string }, void>(async (rows) => {
    await db.query({ ...insert, values: [rows.map((r) => r.seq), rows.map((r) => r.body)] });
    return rows.map(() => undefined);
  });
  runDeliveryLoop({
    contract: 'ingest-floor',
    durable: 'floor',
    schema: Envelope,
    fetchFrom: await jetstream(nc).consumers.get(inboundStream, 'floor'),
    concurrency,
    // The floor has no failures to handle under the bench: a body comes back in a second.
    retryDelayMs: () => 1_000,
    handler: async ({ body }, ctx) => {
      await stored.submit({ seq: ctx.seq, body });
      const id = createHash('sha256').update(body).digest('hex');
      await publish(eventSubject, JSON.stringify({ event_id: id, body }), id);
      return undefined;
    },
  });
} else {
  const app = Fastify({ logger: false, bodyLimit: 4 * 1024 * 1024 });
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => done(null, body));
  app.post('/floor', async (req) => {
    const body = z.string().parse(req.body);
    const envelope: z.input<typeof Envelope> = { body };
    const ack = await publish(
      inSubject,
      JSON.stringify(envelope),
      createHash('sha256').update(body).digest('hex'),
    );
    return { status: 'accepted', duplicate: ack.duplicate };
  });
  await app.listen({ host: '127.0.0.1', port: env.PORT });
}
process.stdout.write('ingest-floor ready\n');
