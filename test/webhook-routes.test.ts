import { jetstream } from '@nats-io/jetstream';
import { registerWebhookRoutes } from '@switchboard/gateway';
import {
  createHttpServer,
  createLogger,
  type HttpServer,
  installInboxErrorHandling,
  registerOpenApi,
} from '@switchboard/kit';
import type { Principal } from '@switchboard/proto';
import { fanoutRpc, ServiceError } from '@switchboard/proto';
import {
  admin,
  principal,
  type Receiver,
  receivedWebhookHeaders,
  startReceiver,
  waitFor,
} from '@switchboard/testkit';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FanoutWorker, startFanoutWorker } from './support/fanout.ts';

const alice = principal(2);
const bob = principal(3);
const configurator = principal(4, 'configurator');
const tokens: Record<string, Principal> = { admin, alice, bob, configurator };

let h: FanoutWorker;
let app: HttpServer;
const receivers: Receiver[] = [];

beforeAll(async () => {
  h = await startFanoutWorker();
  app = createHttpServer({ logger: createLogger('gateway-test', 'silent') });
  installInboxErrorHandling(app);
  await registerOpenApi(app, {
    title: 'test',
    version: '1',
    description: 'test',
    jsonPath: '/api/v1/schema/',
    docsPrefix: '/api/v1/docs',
    securitySchemes: { token: { type: 'apiKey', in: 'header', name: 'Authorization' } },
  });
  await registerWebhookRoutes(app, {
    bus: h.bus,
    authenticate: async (req) => {
      const token = /^Token (\w+)$/.exec(req.headers.authorization ?? '')?.[1];
      const p = token ? tokens[token] : undefined;
      if (!p) throw new ServiceError('not_authenticated');
      return p;
    },
  });
  await app.ready();
});
afterAll(async () => {
  await app.close();
  await h.stop();
  await Promise.all(receivers.map((r) => r.close()));
});

const auth = (who: string) => ({ authorization: `Token ${who}` });

/** An integer of POSIX seconds within a few seconds of now (plus `offset`). */
function expectRecentSeconds(value: unknown, what: string, offset = 0): void {
  const now = Math.floor(Date.now() / 1000) + offset;
  expect([what, Number.isInteger(value)]).toEqual([what, true]);
  expect([what, Math.abs((value as number) - now) <= 15]).toEqual([what, true]);
}

async function createVia(who: string, url: string, extra: Record<string, unknown> = {}) {
  const res = await app.inject({
    method: 'POST',
    url: '/api/v1/webhooks/waba/',
    headers: auth(who),
    payload: { url, ...extra },
  });
  return res;
}

describe('webhook resources over HTTP', () => {
  it('creates a webhook and shows the secret only in that response', async () => {
    const res = await createVia('alice', 'https://example.com/hook', { headers: { 'X-Api-Key': 'k1' } });
    expect(res.statusCode).toBe(201);
    const created = res.json();
    expect(created).toMatchObject({
      url: 'https://example.com/hook',
      owner: 2,
      enabled: true,
      ordered: false,
      headers: { 'X-Api-Key': 'k1' },
    });
    expect(created.secret).toMatch(/^whsec_/);
    // Times are integer POSIX seconds, like every time of the inbox API.
    expectRecentSeconds(created.created_at, 'created_at');
    expectRecentSeconds(created.updated_at, 'updated_at');
    expect(created).toMatchObject({ failing_since: null, previous_secret_expires_at: null });
    // The secret is a valid Standard Webhooks key.
    expect(() => new StandardWebhook(created.secret)).not.toThrow();

    const got = await app.inject({ url: `/api/v1/webhooks/waba/${created.id}/`, headers: auth('alice') });
    expect(got.statusCode).toBe(200);
    expect(got.json()).not.toHaveProperty('secret');
    const list = await app.inject({ url: '/api/v1/webhooks/waba/', headers: auth('alice') });
    expect(JSON.stringify(list.json())).not.toContain('whsec_');
  });

  it('lets users see and change only their own webhooks; admins and the configurator manage all', async () => {
    const mine = (await createVia('bob', 'https://example.com/bob')).json();
    const theirs = (await createVia('alice', 'https://example.com/alice')).json();

    const bobList = (await app.inject({ url: '/api/v1/webhooks/waba/', headers: auth('bob') })).json();
    expect(bobList.results.map((w: { owner: number }) => w.owner)).toEqual([3]);
    expect(
      (await app.inject({ url: `/api/v1/webhooks/waba/${theirs.id}/`, headers: auth('bob') })).statusCode,
    ).toBe(404);
    const patchOther = await app.inject({
      method: 'PATCH',
      url: `/api/v1/webhooks/waba/${theirs.id}/`,
      headers: auth('bob'),
      payload: { enabled: false },
    });
    expect(patchOther.statusCode).toBe(404);
    expect(patchOther.json()).toMatchObject({ code: 'not_found' });

    for (const who of ['admin', 'configurator']) {
      const all = (await app.inject({ url: '/api/v1/webhooks/waba/?limit=100', headers: auth(who) })).json();
      const ids = all.results.map((w: { id: string }) => w.id);
      expect(ids).toEqual(expect.arrayContaining([mine.id, theirs.id]));
    }
    const onlyBob = (
      await app.inject({ url: '/api/v1/webhooks/waba/?owner=3', headers: auth('admin') })
    ).json();
    expect(onlyBob.results.every((w: { owner: number }) => w.owner === 3)).toBe(true);

    const put = await app.inject({
      method: 'PUT',
      url: `/api/v1/webhooks/waba/${mine.id}/`,
      headers: auth('admin'),
      payload: { url: 'https://example.org/new' },
    });
    expect(put.statusCode).toBe(200);
    expect(put.json()).toMatchObject({ url: 'https://example.org/new', owner: 3 });

    const del = await app.inject({
      method: 'DELETE',
      url: `/api/v1/webhooks/waba/${mine.id}/`,
      headers: auth('bob'),
    });
    expect(del.statusCode).toBe(204);
    expect(
      (await app.inject({ url: `/api/v1/webhooks/waba/${mine.id}/`, headers: auth('admin') })).statusCode,
    ).toBe(404);
    // Its durables go with it.
    const jsm = await jetstream(h.nc).jetstreamManager();
    const names: string[] = [];
    for await (const c of jsm.consumers.list(`sb_${h.bus.instance}_events`)) names.push(c.name);
    expect(names.some((n) => n.includes(mine.id))).toBe(false);
    expect(names.filter((n) => n.includes(theirs.id))).toHaveLength(2);
  });

  it('answers in the inbox error shape', async () => {
    expect((await app.inject({ url: '/api/v1/webhooks/waba/' })).statusCode).toBe(401);
    // Authentication comes before body validation.
    const anonymous = await app.inject({
      method: 'POST',
      url: '/api/v1/webhooks/waba/',
      payload: { url: 'ftp://x' },
    });
    expect(anonymous.statusCode).toBe(401);
    const badUrl = await createVia('alice', 'ftp://example.com/');
    expect(badUrl.statusCode).toBe(400);
    expect(badUrl.json()).toMatchObject({ code: 'validation_error', fields: { url: [expect.any(String)] } });
    const reserved = await createVia('alice', 'https://example.com/', {
      headers: { 'Webhook-Signature': 'x' },
    });
    expect(reserved.statusCode).toBe(400);
    expect(reserved.json().code).toBe('validation_error');
    const creds = await createVia('alice', 'https://user:pw@example.com/');
    expect(creds.statusCode).toBe(400);
    const missing = await app.inject({ url: '/api/v1/webhooks/waba/not-a-uuid/', headers: auth('admin') });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual({ code: 'not_found', reason: 'No such webhook.' });
  });

  it('refuses static headers that could never be sent, with 400 and the field, never 5xx', async () => {
    const hook = (await createVia('alice', 'https://example.com/headers')).json();
    const bad: Array<[what: string, headers: Record<string, string>]> = [
      ['space in the name', { 'X Api': 'v' }],
      ['colon in the name', { 'X:Api': 'v' }],
      ['empty name', { '': 'v' }],
      ['non-ASCII name', { 'X-Ünï': 'v' }],
      ['emoji name', { 'X-🚀': 'v' }],
      ['lone surrogate name', { 'X-\ud800': 'v' }],
      ['overlong name', { [`X-${'a'.repeat(100)}`]: 'v' }],
      ...[
        'Content-Type',
        'content-length',
        'Host',
        'Webhook-Id',
        'webhook-timestamp',
        'Webhook-Signature',
        'Transfer-Encoding',
        'Connection',
        'Keep-Alive',
        'Upgrade',
        'TE',
        'Proxy-Authorization',
      ].map((name): [string, Record<string, string>] => [`reserved ${name}`, { [name]: 'v' }]),
      ['CRLF injection', { 'X-A': 'a\r\nX-Injected: 1' }],
      ['bare LF', { 'X-A': 'a\nb' }],
      ['bare CR', { 'X-A': 'a\rb' }],
      ['NUL', { 'X-A': 'a\u0000b' }],
      ['BEL', { 'X-A': 'a\u0007b' }],
      ['DEL', { 'X-A': 'a\u007fb' }],
      ['emoji value', { 'X-A': '🚀' }],
      ['right-to-left override', { 'X-A': '\u202eevil' }],
      ['lone high surrogate', { 'X-A': '\ud800' }],
      ['lone low surrogate', { 'X-A': 'x\udc00y' }],
      ['Latin-1 value', { 'X-A': 'café' }],
      ['leading space', { 'X-A': ' v' }],
      ['trailing space', { 'X-A': 'v ' }],
      ['leading tab', { 'X-A': '\tv' }],
      ['overlong value', { 'X-A': 'x'.repeat(2001) }],
      ['too many', Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`X-H${i}`, 'v']))],
      ['same name twice', { 'X-A': '1', 'x-a': '2' }],
      [
        'too large together',
        Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`X-H${i}`, 'x'.repeat(1990)])),
      ],
    ];
    const answers: Array<[string, string, number, unknown]> = [];
    for (const [what, headers] of bad) {
      for (const [method, url, payload] of [
        ['POST', '/api/v1/webhooks/waba/', { url: 'https://example.com/hook', headers }],
        ['PATCH', `/api/v1/webhooks/waba/${hook.id}/`, { headers }],
        ['PUT', `/api/v1/webhooks/waba/${hook.id}/`, { url: 'https://example.com/hook', headers }],
      ] as const) {
        const res = await app.inject({ method, url, headers: auth('alice'), payload });
        const body = res.json();
        answers.push([what, method, res.statusCode, body.code]);
        if (res.statusCode === 400) {
          expect([what, Object.keys(body.fields ?? {}).some((f) => f.startsWith('headers'))]).toEqual([
            what,
            true,
          ]);
        }
      }
    }
    expect(answers.filter(([, , status, code]) => status !== 400 || code !== 'validation_error')).toEqual([]);
    // Nothing was stored on the way.
    const after = await app.inject({ url: `/api/v1/webhooks/waba/${hook.id}/`, headers: auth('alice') });
    expect(after.json().headers).toEqual({});
  });

  it('accepts and sends every header HTTP allows', async () => {
    const r = await startReceiver();
    receivers.push(r);
    const headers = {
      Authorization: 'Bearer abc.DEF-123_~+/=',
      "X-Tchar!#$%&'*+.^_`|~": 'v',
      'X-Inner-Whitespace': 'a b\tc',
      'X-Punctuation': '!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~',
      'X-Empty': '',
      'X-Long': 'x'.repeat(2000),
      'User-Agent': 'receiver-wants-this/1.0',
    };
    const created = await createVia('alice', r.url, { headers });
    expect(created.statusCode).toBe(201);
    expect(created.json().headers).toEqual(headers);
    const test = await app.inject({
      url: `/api/v1/webhooks/waba/${created.json().id}/test/`,
      headers: auth('alice'),
    });
    expect(test.json()).toMatchObject({ success: true, status_code: 200 });
    const [got] = r.requests;
    for (const [name, value] of Object.entries(headers)) {
      expect([name, got?.headers[name.toLowerCase()]]).toEqual([name, value]);
    }
    const patched = await app.inject({
      method: 'PATCH',
      url: `/api/v1/webhooks/waba/${created.json().id}/`,
      headers: auth('alice'),
      payload: { headers: { 'X-Only': 'one' } },
    });
    expect(patched.statusCode).toBe(200);
    expect(patched.json().headers).toEqual({ 'X-Only': 'one' });
  });

  it('pages lists with count, next and previous', async () => {
    for (let i = 0; i < 3; i++) await createVia('configurator', `https://example.com/page/${i}`);
    const first = (
      await app.inject({ url: '/api/v1/webhooks/waba/?limit=2', headers: auth('configurator') })
    ).json();
    expect(first.count).toBeGreaterThanOrEqual(3);
    expect(first.results).toHaveLength(2);
    expect(first.previous).toBeNull();
    expect(first.next).toMatch(/\/api\/v1\/webhooks\/waba\/\?limit=2&offset=2$/);
    const second = (
      await app.inject({ url: '/api/v1/webhooks/waba/?limit=2&offset=2', headers: auth('configurator') })
    ).json();
    expect(second.previous).toMatch(/offset=0$/);
    // A limit past the maximum answers the largest page (100), as DRF's max_limit; below 1 is a 400.
    const clamped = await app.inject({ url: '/api/v1/webhooks/waba/?limit=100000', headers: auth('admin') });
    expect(clamped.statusCode).toBe(200);
    expect(clamped.json().results).toHaveLength(Math.min(clamped.json().count, 100));
    for (const bad of ['0', '-1', 'many', '1.5']) {
      const refused = await app.inject({
        url: `/api/v1/webhooks/waba/?limit=${bad}`,
        headers: auth('admin'),
      });
      expect([bad, refused.statusCode, refused.json().code]).toEqual([bad, 400, 'validation_error']);
    }
    const deliveries = await app.inject({
      url: `/api/v1/webhooks/waba/${first.results[0].id}/deliveries/?limit=100000`,
      headers: auth('admin'),
    });
    expect(deliveries.statusCode).toBe(200);
    expect(deliveries.json()).toMatchObject({ next: null, previous: null });
    expect(deliveries.json().results).toHaveLength(deliveries.json().count);
  });

  it('tests a webhook, logs the attempt and shows it under deliveries', async () => {
    const r = await startReceiver(() => ({ status: 202, body: 'thanks' }));
    receivers.push(r);
    const created = (await createVia('alice', r.url)).json();
    const test = await app.inject({
      url: `/api/v1/webhooks/waba/${created.id}/test/`,
      headers: auth('alice'),
    });
    expect(test.statusCode).toBe(200);
    expect(test.json()).toMatchObject({
      success: true,
      status_code: 202,
      error_class: null,
      response_excerpt: 'thanks',
    });
    expect(r.requests).toHaveLength(1);
    const [req] = r.requests;
    if (!req) throw new Error('no test request');
    const body = JSON.parse(req.body);
    expect(body).toMatchObject({ object: 'whatsapp_business_account', test: true });
    expect(body.entry[0].changes[0].value.messages[0].type).toBe('text');
    expect(new StandardWebhook(created.secret).verify(req.body, receivedWebhookHeaders(req))).toBeTruthy();

    const deliveries = await app.inject({
      url: `/api/v1/webhooks/waba/${created.id}/deliveries/`,
      headers: auth('alice'),
    });
    expect(deliveries.statusCode).toBe(200);
    expect(deliveries.json()).toMatchObject({
      count: 1,
      next: null,
      results: [{ trigger: 'test', success: true, status_code: 202, message_id: test.json().message_id }],
    });
    const [attempt] = deliveries.json().results;
    expectRecentSeconds(attempt.attempted_at, 'attempted_at');
    expect(attempt.next_attempt_at).toBeNull();
  });

  it('logs awkward responses: NUL bytes dropped, quotes, braces, backslashes and Unicode kept', async () => {
    const r = await startReceiver(() => ({ status: 500, body: 'a\u0000b "q" {x,y} \\ é 🚀' }));
    receivers.push(r);
    const created = (await createVia('alice', r.url)).json();
    await app.inject({ url: `/api/v1/webhooks/waba/${created.id}/test/`, headers: auth('alice') });
    const deliveries = await app.inject({
      url: `/api/v1/webhooks/waba/${created.id}/deliveries/`,
      headers: auth('alice'),
    });
    expect(deliveries.json().results[0]).toMatchObject({
      success: false,
      status_code: 500,
      error_class: 'http_status',
      response_excerpt: 'ab "q" {x,y} \\ é 🚀',
    });
  });

  it('rotates the secret and replays nothing when nothing failed', async () => {
    const created = (await createVia('alice', 'https://example.com/rotate')).json();
    const rotated = await app.inject({
      method: 'POST',
      url: `/api/v1/webhooks/waba/${created.id}/rotate_secret/`,
      headers: auth('alice'),
    });
    expect(rotated.statusCode).toBe(200);
    expect(rotated.json().secret).toMatch(/^whsec_/);
    expect(rotated.json().secret).not.toBe(created.secret);
    // The old secret keeps signing for 24 hours: POSIX seconds, a day from now.
    expectRecentSeconds(rotated.json().previous_secret_expires_at, 'previous_secret_expires_at', 24 * 3600);
    expectRecentSeconds(rotated.json().updated_at, 'updated_at');
    const replay = await app.inject({
      method: 'POST',
      url: `/api/v1/webhooks/waba/${created.id}/replay/`,
      headers: auth('alice'),
      payload: { since: '2020-01-01T00:00:00Z' },
    });
    expect(replay.statusCode).toBe(202);
    expect(replay.json()).toEqual({ replayed: 0 });
    // `since` takes POSIX seconds like every time of the API, or ISO 8601; before 1970 means all.
    for (const since of [Math.floor(Date.now() / 1000) - 60, 0, '0001-01-01T00:00:00Z']) {
      const res = await app.inject({
        method: 'POST',
        url: `/api/v1/webhooks/waba/${created.id}/replay/`,
        headers: auth('alice'),
        payload: { since },
      });
      expect([since, res.statusCode]).toEqual([since, 202]);
    }
    const tooLate = await app.inject({
      method: 'POST',
      url: `/api/v1/webhooks/waba/${created.id}/replay/`,
      headers: auth('alice'),
      payload: { since: 253_402_300_800 },
    });
    expect(tooLate.json()).toMatchObject({
      code: 'validation_error',
      fields: { since: [expect.any(String)] },
    });
  });

  it('records webhook changes in the event log', async () => {
    const created = (await createVia('alice', 'https://example.com/audited')).json();
    const seen: unknown[] = [];
    const consumer = await jetstream(h.nc).consumers.get(`sb_${h.bus.instance}_commands`);
    const messages = await consumer.consume();
    const done = (async () => {
      for await (const m of messages) {
        seen.push(m.json());
      }
    })();
    await waitFor(
      async () =>
        seen.some(
          (e) => JSON.stringify(e).includes(created.id) && JSON.stringify(e).includes('webhook.created'),
        ),
      5_000,
      'audit entry',
    );
    await messages.close();
    await done;
    const entry = seen.find((e) => JSON.stringify(e).includes(created.id));
    expect(entry).toMatchObject({
      action: 'webhook.created',
      target_type: 'webhook',
      actor: { user_id: 2, username: 'user2' },
    });
    expect(JSON.stringify(entry)).not.toContain('whsec_');
  });

  it('describes every route in the OpenAPI document', async () => {
    const res = await app.inject({ url: '/api/v1/schema/' });
    if (res.statusCode !== 200) throw new Error(res.body);
    const doc = res.json();
    const paths = Object.keys(doc.paths);
    expect(paths).toEqual(
      expect.arrayContaining([
        '/api/v1/webhooks/waba/',
        '/api/v1/webhooks/waba/{id}/',
        '/api/v1/webhooks/waba/{id}/test/',
        '/api/v1/webhooks/waba/{id}/deliveries/',
        '/api/v1/webhooks/waba/{id}/replay/',
      ]),
    );
  });

  it('maps a missing fan-out service to 503', async () => {
    const other = createHttpServer({ logger: createLogger('gateway-test', 'silent') });
    installInboxErrorHandling(other);
    const { instanceId } = await import('@switchboard/proto');
    const { createBus } = await import('@switchboard/proto/bus');
    const lonely = await createBus(h.nc, instanceId('nobody-home'));
    await registerWebhookRoutes(other, { bus: lonely, authenticate: async () => admin });
    const res = await other.inject({ url: '/api/v1/webhooks/waba/' });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ code: 'service_unavailable', dependency: 'fanout' });
    await other.close();
  });

  it('serves the same operations over the bus', async () => {
    const created = await h.bus.request(fanoutRpc.create, {
      principal: alice,
      url: 'https://example.com/rpc',
    });
    const err = await h.bus
      .request(fanoutRpc.get, { principal: bob, id: created.id })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'not_found', status: 404 });
  });
});
