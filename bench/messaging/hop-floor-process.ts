/**
 * One process of the hop floor (`hop-floor.ts`): the same process hand-overs as a send, with no
 * work in between.
 *
 *   HOP_FLOOR_ROLE=front:     HTTP `POST /floor` → a NATS request to the responder → 202 with its answer
 *   HOP_FLOOR_ROLE=responder: each request → one committed `insert` in PostgreSQL → the reply
 *
 * Environment: HOP_FLOOR_ROLE, NATS_URL, HOP_FLOOR_SUBJECT; the front also PORT, the responder
 * DATABASE_URL.
 */
import { connect } from '@nats-io/transport-node';
import Fastify from 'fastify';
import pg from 'pg';
import { z } from 'zod';

const env = z
  .object({
    HOP_FLOOR_ROLE: z.enum(['front', 'responder']),
    NATS_URL: z.string(),
    HOP_FLOOR_SUBJECT: z.string(),
    PORT: z.coerce.number().int().optional(),
    DATABASE_URL: z.string().optional(),
  })
  .parse(process.env);

const nc = await connect({ servers: env.NATS_URL.replace(/^nats:\/\//, '') });

if (env.HOP_FLOOR_ROLE === 'responder') {
  if (!env.DATABASE_URL) throw new Error('DATABASE_URL is required for the responder');
  const db = new pg.Client({ connectionString: env.DATABASE_URL });
  await db.connect();
  await db.query('create table if not exists hop_floor (id bigserial primary key, body text not null)');
  const insert = { name: 'hop_floor_insert', text: 'insert into hop_floor (body) values ($1) returning id' };
  nc.subscribe(env.HOP_FLOOR_SUBJECT, {
    callback: (_err, msg) => {
      void db.query<{ id: string }>({ ...insert, values: [msg.string()] }).then(
        (r) => msg.respond(JSON.stringify({ id: r.rows[0]?.id })),
        (err: unknown) => msg.respond(JSON.stringify({ error: String(err) })),
      );
    },
  });
  await nc.flush();
} else {
  if (!env.PORT) throw new Error('PORT is required for the front');
  const app = Fastify({ logger: false });
  const Answer = z.union([z.object({ id: z.string() }), z.object({ error: z.string() })]);
  app.post('/floor', async (req, reply) => {
    const answer = Answer.parse(
      (await nc.request(env.HOP_FLOOR_SUBJECT, JSON.stringify(req.body), { timeout: 5_000 })).json(),
    );
    return reply.status('id' in answer ? 202 : 500).send(answer);
  });
  await app.listen({ host: '127.0.0.1', port: env.PORT });
}
process.stdout.write('ready\n');
