/**
 * One process of the hop floor (`hop-floor.ts`): the same process hand-overs as a send, with no
 * work in between.
 *
 *   HOP_FLOOR_ROLE=front:     HTTP `POST /floor` → a NATS request to the responder → 202 with its answer
 *   HOP_FLOOR_ROLE=responder: each request → one committed `insert` in PostgreSQL → the reply
 *
 * Environment: HOP_FLOOR_ROLE, NATS_URL, HOP_FLOOR_SUBJECT; the front also PORT, the responder
 * DATABASE_URL. Prints `hop-floor ready` on stdout once it takes requests.
 */
import { connectNats } from '@switchboard/kit';
import Fastify from 'fastify';
import pg from 'pg';
import { z } from 'zod';

const env = z
  .discriminatedUnion('HOP_FLOOR_ROLE', [
    z.object({ HOP_FLOOR_ROLE: z.literal('front'), PORT: z.coerce.number().int().positive() }),
    z.object({ HOP_FLOOR_ROLE: z.literal('responder'), DATABASE_URL: z.string().min(1) }),
  ])
  .and(z.object({ NATS_URL: z.string().min(1), HOP_FLOOR_SUBJECT: z.string().min(1) }))
  .parse(process.env);

// As the services connect, so the floor's hand-overs are theirs.
const nc = await connectNats(env.NATS_URL, `hop-floor-${env.HOP_FLOOR_ROLE}`);

if (env.HOP_FLOOR_ROLE === 'responder') {
  const db = new pg.Client({ connectionString: env.DATABASE_URL });
  await db.connect();
  await db.query('create table if not exists hop_floor (id bigserial primary key, body text not null)');
  const insert = { name: 'hop_floor_insert', text: 'insert into hop_floor (body) values ($1) returning id' };
  nc.subscribe(env.HOP_FLOOR_SUBJECT, {
    callback: (err, msg) => {
      // A subscription error has no message to answer; the front's request times out.
      if (err) return;
      // bigint ids come back as strings or numbers, by the type parsers this process loaded.
      void db.query<{ id: string | number }>({ ...insert, values: [msg.string()] }).then(
        (r) => msg.respond(JSON.stringify({ id: String(r.rows[0]?.id) })),
        (failure: unknown) => msg.respond(JSON.stringify({ error: String(failure) })),
      );
    },
  });
  await nc.flush();
} else {
  const Body = z.record(z.string(), z.unknown());
  const Answer = z.union([z.object({ id: z.string() }), z.object({ error: z.string() })]);
  const app = Fastify({ logger: false });
  app.post('/floor', async (req, reply) => {
    const body = Body.safeParse(req.body);
    if (!body.success) return reply.status(400).send({ error: 'the body must be a JSON object' });
    const answer = Answer.parse(
      (await nc.request(env.HOP_FLOOR_SUBJECT, JSON.stringify(body.data), { timeout: 5_000 })).json(),
    );
    return reply.status('id' in answer ? 202 : 500).send(answer);
  });
  await app.listen({ host: '127.0.0.1', port: env.PORT });
}
process.stdout.write('hop-floor ready\n');
