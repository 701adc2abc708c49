/**
 * One process of the ingest floor (`ingest-floor.ts`): the same process hand-overs as an
 * inbound webhook, with no work in between.
 *
 *   INGEST_FLOOR_ROLE=front:  HTTP `POST /floor` → a JetStream publish of the body (with a
 *                             message id, as the gateway's) → 200 after the PubAck
 *   INGEST_FLOOR_ROLE=folder: a durable pull consumer of that stream; the bodies that arrived
 *                             together go into PostgreSQL in one statement, then one JetStream
 *                             publish per body (the event the listeners wait for), then the acks
 *
 * Both batch as the inbox does: the NATS calls of one event-loop turn share one socket write,
 * and the folder stores whatever arrived while its last statement ran. What the inbox does on top
 * (validation, parsing, persons, chats, messages, statuses, the event log, tracing) is left out.
 *
 * Environment: INGEST_FLOOR_ROLE, NATS_URL, INGEST_FLOOR_PREFIX (subjects `<prefix>.in` and
 * `<prefix>.events`); the front also PORT, the folder DATABASE_URL. Prints `ingest-floor ready`
 * on stdout once it takes requests.
 */
import { createHash } from 'node:crypto';
import { AckPolicy, DeliverPolicy, type JsMsg, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { headers } from '@nats-io/nats-core';
import { connectNats } from '@switchboard/kit';
import { instanceId } from '@switchboard/proto';
import { createReplyMux, streamConfigs } from '@switchboard/proto/bus';
import Fastify from 'fastify';
import pg from 'pg';
import { z } from 'zod';

const env = z
  .discriminatedUnion('INGEST_FLOOR_ROLE', [
    z.object({ INGEST_FLOOR_ROLE: z.literal('front'), PORT: z.coerce.number().int().positive() }),
    z.object({ INGEST_FLOOR_ROLE: z.literal('folder'), DATABASE_URL: z.string().min(1) }),
  ])
  .and(z.object({ NATS_URL: z.string().min(1), INGEST_FLOOR_PREFIX: z.string().regex(/^[a-z0-9_.]+$/) }))
  .parse(process.env);

const prefix = env.INGEST_FLOOR_PREFIX;
const inSubject = `${prefix}.in`;
const eventSubject = `${prefix}.events`;
const streamOf = (kind: string) => `${prefix.replaceAll('.', '_')}_${kind}`;

const nc = await connectNats(env.NATS_URL, `ingest-floor-${env.INGEST_FLOOR_ROLE}`);
const js = jetstream(nc);

/** Calls made in one event-loop turn start together, so the client writes them in one go. */
function perTurn(): (call: () => void) => void {
  let queued: Array<() => void> = [];
  return (call) => {
    queued.push(call);
    if (queued.length === 1)
      setImmediate(() => {
        const batch = queued;
        queued = [];
        for (const c of batch) c();
      });
  };
}
const atTurnEnd = perTurn();

// Publishes wait for their PubAck through the inbox's own reply multiplexer (proto's), as the
// gateway's and chats' do: the NATS client's request path costs more per call.
const replies = createReplyMux(nc);
const encoder = new TextEncoder();
const PubAck = z.object({ duplicate: z.boolean().optional() });

function publish(subject: string, data: string, msgID: string) {
  const h = headers();
  h.set('Nats-Msg-Id', msgID);
  return new Promise<{ duplicate: boolean }>((resolve, reject) =>
    atTurnEnd(() => {
      replies.request(subject, encoder.encode(data), { headers: h, timeoutMs: 5_000 }).then((m) => {
        resolve({ duplicate: PubAck.parse(m.json()).duplicate ?? false });
      }, reject);
    }),
  );
}

if (env.INGEST_FLOOR_ROLE === 'folder') {
  // The streams as the inbox's (file storage, the same duplicate window), under names of their own.
  const jsm = await jetstreamManager(nc);
  const [inbound, events] = streamConfigs(instanceId('floor'));
  for (const [config, kind, subject] of [
    [inbound, 'inbound', inSubject],
    [events, 'events', eventSubject],
  ] as const) {
    await jsm.streams.add({ ...config, name: streamOf(kind), subjects: [subject] });
  }
  await jsm.consumers.add(streamOf('inbound'), {
    durable_name: 'floor',
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    max_ack_pending: 10_000,
  });
  const db = new pg.Client({ connectionString: env.DATABASE_URL });
  await db.connect();
  await db.query('create table if not exists ingest_floor (seq bigint primary key, body text not null)');
  const insert = {
    name: 'ingest_floor_insert',
    text:
      'insert into ingest_floor (seq, body) select * from unnest($1::bigint[], $2::text[]) ' +
      'on conflict (seq) do nothing',
  };

  let waiting: JsMsg[] = [];
  let running = false;
  const fold = async () => {
    running = true;
    while (waiting.length) {
      const batch = waiting;
      waiting = [];
      try {
        await db.query({ ...insert, values: [batch.map((m) => m.seq), batch.map((m) => m.string())] });
        await Promise.all(
          batch.map((m) => {
            const body = m.string();
            const id = createHash('sha256').update(body).digest('hex');
            return publish(eventSubject, JSON.stringify({ event_id: id, body }), id);
          }),
        );
        atTurnEnd(() => {
          for (const m of batch) m.ack();
        });
      } catch {
        // Comes back after AckWait; the floor has no failures to handle under the bench.
        for (const m of batch) m.nak(1_000);
      }
    }
    running = false;
  };
  const messages = await (await js.consumers.get(streamOf('inbound'), 'floor')).consume({
    max_messages: 1_000,
  });
  void (async () => {
    for await (const m of messages) {
      waiting.push(m);
      if (!running) setImmediate(() => void (running ? undefined : fold()));
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
