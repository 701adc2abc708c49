/**
 * The raw baseline of the media benchmark: a bare Fastify server, in its own process like the
 * media service, that streams an upload's body to a file on disk and a file from disk to the
 * client (`GET /file/<name>`), with no database, no object store, no checks.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import Fastify from 'fastify';

const dir = process.env.RAW_DIR ?? '/tmp';
const port = Number(process.env.RAW_PORT ?? 0);
const app = Fastify({ bodyLimit: 200 * 1024 * 1024 });
app.addContentTypeParser('*', (_req, _payload, done) => done(null, undefined));

let uploads = 0;
app.post('/upload', async (req, reply) => {
  const path = join(dir, `raw-upload-${process.pid}-${uploads++}`);
  await pipeline(req.raw, createWriteStream(path));
  const { size } = await stat(path);
  await rm(path, { force: true });
  return reply.status(201).send({ size });
});

app.get<{ Params: { name: string } }>('/file/:name', async (req, reply) => {
  const path = join(dir, req.params.name.replace(/[^\w.-]/g, ''));
  const { size } = await stat(path);
  return reply.type('application/pdf').header('content-length', String(size)).send(createReadStream(path));
});

const url = await app.listen({ host: '127.0.0.1', port });
process.stdout.write(`listening ${url}\n`);
process.on('SIGTERM', () => {
  app.close().then(() => process.exit(0));
});
