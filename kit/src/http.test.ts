import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createHttpServer } from './http.ts';
import { createLogger } from './logger.ts';

/** A server whose log lines are kept, with a quiet route (`logLevel: 'warn'`) and a loud one. */
async function serverWithLog() {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line) lines.push(JSON.parse(line));
      done();
    },
  });
  const app = createHttpServer({ logger: createLogger('http-test', 'info', sink) });
  app.get('/loud/', async () => ({ ok: true }));
  app.get('/quiet/', { logLevel: 'warn' }, async (req, reply) =>
    (req.query as Record<string, string>).fail ? reply.status(401).send({ ok: false }) : { ok: true },
  );
  await app.ready();
  return { app, lines };
}

describe('access log', () => {
  it('writes one line per request, without the query string, and only refusals on quiet routes', async () => {
    const { app, lines } = await serverWithLog();
    await app.inject({ method: 'GET', url: '/loud/?hub.verify_token=s3cret&search=erika' });
    await app.inject({ method: 'GET', url: '/quiet/' });
    await app.inject({ method: 'GET', url: '/quiet/?fail=1' });
    await app.close();

    const access = lines.filter(
      (l) => typeof l.msg === 'string' && /^(incoming request|request )/.test(l.msg),
    );
    expect(access.map((l) => [l.msg, l.level, l.path, l.statusCode])).toEqual([
      ['request completed', 30, '/loud/', 200],
      ['request completed', 40, '/quiet/', 401],
    ]);
    expect(JSON.stringify(lines)).not.toContain('s3cret');
    expect(JSON.stringify(lines)).not.toContain('erika');
    expect(access[0]).toMatchObject({ method: 'GET', remoteAddress: '127.0.0.1' });
    expect(typeof access[0]?.responseTime).toBe('number');
  });
});
