import { createHmac } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstream } from '@nats-io/jetstream';
import {
  connectNats,
  createDb,
  createLogger,
  createMailer,
  type HttpServer,
  type NatsConnection,
  pingDb,
  pingNats,
} from '@switchboard/kit';
import {
  ensureConfigurator,
  instanceId,
  principalLookup,
  ServiceError,
  streamName,
} from '@switchboard/proto';
import { type Bus, createBus } from '@switchboard/proto/bus';
import {
  freshDatabase,
  type TestDatabase,
  testNatsUrl,
  uniqueInstanceId,
  waitFor,
} from '@switchboard/testkit';
import { startNatsServer } from '@switchboard/testkit/infra';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { createGateway } from '../src/service.ts';
import type { GatewayDatabase } from '../src/store/db.ts';

const SECRET = 'app-secret';
const log = createLogger('gateway-test', 'silent');

const config = (env: Record<string, string>) =>
  loadConfig({ DATABASE_URL: 'postgres://unused@127.0.0.1/x', INBOX_SECRET_KEY: 'k'.repeat(40), ...env });

/** The gateway on the test database, with its health probes on the given NATS connection. */
async function gatewayOn(
  bus: Bus,
  natsConnection: NatsConnection,
  env: Record<string, string>,
  natsProbeMs?: number,
): Promise<HttpServer> {
  const built = await buildApp({
    log,
    bus,
    db,
    config: config(env),
    mailer: createMailer(undefined, 'x@y', log),
    health: { database: () => pingDb(db), nats: () => pingNats(natsConnection, natsProbeMs) },
  });
  return built.app;
}

/** An answer's status beside its body, so a wrong status shows what came with it. */
const answer = (res: { statusCode: number; json(): unknown }) => ({
  status: res.statusCode,
  body: res.json(),
});

let testDb: TestDatabase;
let db: Kysely<GatewayDatabase>;
let nc: NatsConnection;
let app: HttpServer;
let instance: string;

beforeAll(async () => {
  testDb = await freshDatabase('gateway');
  db = createDb<GatewayDatabase>({ url: testDb.url, applicationName: 'gateway-test' });
  nc = await connectNats(testNatsUrl(), 'gateway-test');
  instance = uniqueInstanceId();
  const bus = await createBus(nc, instanceId(instance));
  await bus.ensureStreams();
  app = await gatewayOn(bus, nc, { WABA_WEBHOOK_SECRET: SECRET, WABA_VERIFY_TOKEN: 'verify-me' });
  // A route with a schema, to see validation errors leave in the inbox shape.
  app.post(
    '/api/v1/_probe/',
    {
      schema: { body: z.object({ wa_id: z.string().regex(/^\d+$/), text: z.object({ body: z.string() }) }) },
    },
    async () => ({ ok: true }),
  );
  await app.ready();
});

afterAll(async () => {
  await app.close();
  await nc.drain();
  await db.destroy();
  await testDb.drop();
});

describe('health', () => {
  it('is 200 when PostgreSQL and NATS answer', async () => {
    const res = await app.inject({ method: 'GET', url: '/api/v1/status/health/' });
    expect(answer(res)).toEqual({ status: 200, body: { status: 'ok' } });
    expect(res.headers['x-request-id']).toBeTruthy();
  });

  it('is 503 naming NATS when NATS stops answering', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sb-nats-'));
    const own = await startNatsServer({ storeDir: dir });
    const ownNc = await connectNats(own.url, 'health-probe');
    const probe = await gatewayOn(await createBus(ownNc, instanceId(uniqueInstanceId())), ownNc, {}, 500);
    expect((await probe.inject({ url: '/api/v1/status/health/' })).statusCode).toBe(200);
    await own.stop();
    expect(answer(await probe.inject({ url: '/api/v1/status/health/' }))).toEqual({
      status: 503,
      body: {
        status: 'unavailable',
        code: 'service_unavailable',
        reason: 'NATS is not answering.',
        checks: { database: 'ok', nats: 'down' },
      },
    });
    await probe.close();
    await ownNc.close();
  });
});

describe('error shape', () => {
  it('answers unknown routes with a 404 in the inbox shape', async () => {
    expect(answer(await app.inject({ method: 'GET', url: '/api/v1/nope/' }))).toEqual({
      status: 404,
      body: { code: 'not_found', reason: 'No route for GET /api/v1/nope/.' },
    });
  });

  it('turns schema failures into 400 with fields', async () => {
    const res = await app.inject({ method: 'POST', url: '/api/v1/_probe/', payload: { wa_id: '+49x' } });
    expect(res.statusCode).toBe(400);
    const body = res.json();
    expect(body.code).toBe('validation_error');
    expect(Object.keys(body.fields).sort()).toEqual(['text', 'wa_id']);
    expect(body.fields.text).toEqual(['This field is required.']);
  });

  it('answers malformed JSON with 400 invalid_json', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/api/v1/_probe/',
      headers: { 'content-type': 'application/json' },
      payload: '{"wa_id":',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('invalid_json');
  });

  it('keeps a well-formed caller request id', async () => {
    const res = await app.inject({ url: '/api/v1/nope/', headers: { 'x-request-id': 'abc-123' } });
    expect(res.headers['x-request-id']).toBe('abc-123');
  });
});

describe('OpenAPI', () => {
  it('serves the document generated from the route schemas and a docs page', async () => {
    const doc = await app.inject({ url: '/api/v1/schema/' });
    expect(doc.statusCode).toBe(200);
    const spec = doc.json();
    expect(spec.openapi).toBe('3.1.0');
    expect(spec.paths['/api/v1/status/health/'].get.responses['503']).toBeTruthy();
    expect(spec.paths['/api/v1/waba/webhook/'].post).toBeTruthy();
    const page = await app.inject({ url: '/api/v1/docs/' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
  });
});

describe('network webhook receiver', () => {
  const body = JSON.stringify({ object: 'whatsapp_business_account', entry: [{ id: '1', changes: [] }] });
  const sign = (raw: string) => `sha256=${createHmac('sha256', SECRET).update(raw).digest('hex')}`;
  /** The network's POST of `raw`, signed with the app secret unless another signature (or null: none) is given. */
  const postWebhook = (raw: string, signature: string | null = sign(raw)) =>
    app.inject({
      method: 'POST',
      url: '/api/v1/waba/webhook/',
      headers: {
        'content-type': 'application/json',
        ...(signature ? { 'x-hub-signature-256': signature } : {}),
      },
      payload: raw,
    });

  it('echoes the challenge when the verify token matches and refuses otherwise', async () => {
    const ok = await app.inject({
      url: '/api/v1/waba/webhook/?hub.mode=subscribe&hub.verify_token=verify-me&hub.challenge=1158201444',
    });
    expect(ok.statusCode).toBe(200);
    expect(ok.body).toBe('1158201444');
    const bad = await app.inject({
      url: '/api/v1/waba/webhook/?hub.mode=subscribe&hub.verify_token=x&hub.challenge=1',
    });
    expect(bad.statusCode).toBe(403);
    expect(bad.json().code).toBe('verify_token_mismatch');
  });

  it('refuses a wrong token of the right length in any charset alike, without revealing the length', async () => {
    // As many characters as `verify-me` but one byte more in UTF-8: once a 500, telling the length apart.
    for (const guess of ['verify-mé', 'verify-m', 'verify-me!', 'é'.repeat(40)]) {
      const res = await app.inject({
        url: `/api/v1/waba/webhook/?hub.mode=subscribe&hub.verify_token=${encodeURIComponent(guess)}&hub.challenge=1`,
      });
      expect({ guess, ...answer(res) }).toMatchObject({
        guess,
        status: 403,
        body: { code: 'verify_token_mismatch' },
      });
    }
    const ok = await app.inject({
      url: '/api/v1/waba/webhook/?hub.mode=subscribe&hub.verify_token=verify-me&hub.challenge=42',
    });
    expect([ok.statusCode, ok.body]).toEqual([200, '42']);
  });

  it('rejects a missing or wrong signature with 401 and stores nothing', async () => {
    const jsm = await jetstream(nc).jetstreamManager();
    const before = (await jsm.streams.info(streamName(instanceId(instance), 'inbound'))).state.messages;
    for (const sig of [null, 'sha256=00', sign(`${body} `)]) {
      const res = await postWebhook(body, sig);
      expect(res.statusCode).toBe(401);
      expect(res.json().code).toBe('invalid_signature');
    }
    const after = (await jsm.streams.info(streamName(instanceId(instance), 'inbound'))).state.messages;
    expect(after).toBe(before);
  });

  it('stores a signed body once, even when the network redelivers it', async () => {
    const post = () => postWebhook(body);
    const first = await post();
    expect(first.statusCode).toBe(200);
    expect(first.json()).toEqual({ status: 'accepted', duplicate: false });
    const second = await post();
    expect(second.json()).toEqual({ status: 'accepted', duplicate: true });
    const jsm = await jetstream(nc).jetstreamManager();
    await waitFor(
      async () => (await jsm.streams.info(streamName(instanceId(instance), 'inbound'))).state.messages === 1,
      5_000,
      'one stored body',
    );
  });

  it('accepts bodies up to 3 MB and refuses larger ones with 413', async () => {
    const pad = (n: number) => JSON.stringify({ object: 'whatsapp_business_account', pad: 'x'.repeat(n) });
    const fits = pad(3 * 1024 * 1024 - 100);
    expect((await postWebhook(fits)).statusCode).toBe(200);
    const tooBig = pad(3 * 1024 * 1024 + 10);
    const res = await postWebhook(tooBig);
    expect([res.statusCode, res.json().code]).toEqual([413, 'payload_too_large']);
  });

  it('refuses signed bodies that are not a JSON object', async () => {
    for (const raw of ['[1,2]', '{"a":']) {
      expect((await postWebhook(raw)).statusCode).toBe(400);
    }
  });
});

describe('composition root (createGateway)', () => {
  it('creates the first admin, serves the gateway requests and listens on start; stops all of it', async () => {
    // An instance of its own: no other responder for its gateway requests.
    const bus = await createBus(nc, instanceId(uniqueInstanceId()));
    await bus.ensureStreams();
    const admin = { username: 'composed-admin', password: 'a sturdy operator phrase 7' };
    const gateway = await createGateway({
      db,
      bus,
      log,
      config: config({
        PORT: '0',
        INBOX_ADMIN_USERNAME: admin.username,
        INBOX_ADMIN_PASSWORD: admin.password,
      }),
    });
    // Built, not listening: usable with inject() before start.
    expect((await gateway.app.inject({ url: '/api/v1/status/health/' })).statusCode).toBe(200);
    await gateway.start();
    const { port } = gateway.app.server.address() as AddressInfo;
    const url = `http://127.0.0.1:${port}`;
    expect((await fetch(`${url}/api/v1/status/health/`)).status).toBe(200);
    const login = await fetch(`${url}/api/v1/auth/token/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(admin),
    });
    expect(login.status).toBe(200);

    const configurator = await bus.request(ensureConfigurator, { username: 'composed-configurator' });
    const { principal } = await bus.request(principalLookup, { user_id: configurator.user_id });
    expect(principal).toMatchObject({ user_id: configurator.user_id, role: 'configurator' });

    await gateway.stop();
    await expect(fetch(`${url}/api/v1/status/health/`)).rejects.toThrow();
    const after = await bus
      .request(principalLookup, { user_id: configurator.user_id }, { timeoutMs: 1_000 })
      .catch((err: unknown) => err);
    expect(after).toBeInstanceOf(ServiceError);
    expect((after as ServiceError).code).toBe('service_unavailable');
  });
});
