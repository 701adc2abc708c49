import { createDecipheriv, createECDH, hkdfSync, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { jetstreamManager } from '@nats-io/jetstream';
import { connectNats, createDb } from '@switchboard/kit';
import { instanceId, networkEvent, streamName } from '@switchboard/proto';
import { isNotFound } from '@switchboard/proto/bus';
import {
  type Receiver,
  receivedWebhookHeaders,
  startReceiver,
  testNatsUrl,
  waitFor,
} from '@switchboard/testkit';
import { sql } from 'kysely';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json } from './support/api.ts';
import { type Inbox, startInbox } from './support/inbox.ts';

/**
 * Contacts from contact providers (real HTTP on loopback), contact actions at the sandbox
 * network, tags with their history, saved responses, push tokens and Web Push to a loopback
 * push service that decrypts what it receives (RFC 8291).
 */

const vapid = createECDH('prime256v1');
vapid.generateKeys();

let inbox: Inbox;
let admin = '';
let agent = '';
let agentNoTags = '';
let agentAssigned = '';
let agentId = 0;
let fastProvider: Receiver;
let slowProvider: Receiver;
const CUSTOMER = '4915550001001';
const SLOW_SECRET = `whsec_${Buffer.from('a secret of the slow provider, 32+').toString('base64')}`;
const OTHER = '4915550001002';

async function call(token: string, method: string, path: string, body?: unknown): Promise<Response> {
  return inbox.api(method, path, { token, ...(body !== undefined && { body }) });
}
async function ok<T>(token: string, method: string, path: string, body?: unknown): Promise<T> {
  const res = await call(token, method, path, body);
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.status === 204 ? (undefined as T) : json<T>(res);
}

beforeAll(async () => {
  // The fast provider knows Ana (in its own number format) and Bruno; the slow one answers after its timeout.
  fastProvider = await startReceiver({
    reply: (req) => {
      const q = JSON.parse(req.body) as { type: string; query?: string; wa_id?: string };
      const book = [
        { wa_id: `+49 155 5000 1001`, name: 'Ana Lima', extra: { customer_id: 'C-1' } },
        { wa_id: '4915550009999', name: 'Bruno Alves' },
      ];
      const hits =
        q.type === 'lookup'
          ? book.filter((c) => c.wa_id.replace(/\D/g, '') === q.wa_id)
          : book.filter((c) => c.name.toLowerCase().includes((q.query ?? '').toLowerCase()));
      return {
        status: 200,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ contacts: hits }),
      };
    },
  });
  slowProvider = await startReceiver({
    reply: () => ({
      status: 200,
      delayMs: 3000,
      headers: { 'content-type': 'application/json' },
      body: '{"contacts":[]}',
    }),
  });
  inbox = await startInbox({
    env: {
      MAX_NUMBER_OF_SEATS: '10',
      CONTACT_PROVIDERS_ALLOW_PRIVATE_TARGETS: 'true',
      PUSH_ALLOW_PRIVATE_TARGETS: 'true',
      VAPID_PUBLIC_KEY: vapid.getPublicKey().toString('base64url'),
      VAPID_PRIVATE_KEY: vapid.getPrivateKey().toString('base64url'),
    },
  });
  admin = await inbox.login();
  const mk = async (username: string, permissions: Record<string, unknown>) => {
    const password = `Orchard ladder number ${username.length} at noon`;
    const u = await ok<{ id: number }>(admin, 'POST', '/api/v1/users/', { username, password, permissions });
    return { id: u.id, token: await inbox.login(username, password) };
  };
  const a = await mk('agent', { can_read_chats: 'all', can_write_to_chats: 'all', can_use_tags: true });
  agent = a.token;
  agentId = a.id;
  agentNoTags = (
    await mk('agent_no_tags', { can_read_chats: 'all', can_write_to_chats: 'all', can_use_tags: false })
  ).token;
  agentAssigned = (
    await mk('agent_assigned', {
      can_read_chats: 'assigned',
      can_write_to_chats: 'assigned',
      can_use_tags: true,
    })
  ).token;
  await inbox.customerSays(CUSTOMER, { type: 'text', text: { body: 'Hello there' }, profile_name: 'Ana' });
  await inbox.customerSays(OTHER, { type: 'text', text: { body: 'Hi' }, profile_name: 'Carla' });
  await waitFor(
    async () => (await ok<{ count: number }>(admin, 'GET', '/api/v1/chats/')).count === 2,
    15_000,
    'both chats stored',
  );
}, 120_000);

afterAll(async () => {
  await inbox?.stop();
  await fastProvider?.close();
  await slowProvider?.close();
});

describe('contacts from contact providers', () => {
  it('answers within the timeout with the fast provider’s contacts and names the one that timed out', async () => {
    const fast = await ok<{ id: number; secret: string }>(admin, 'POST', '/api/v1/contact_providers/', {
      name: 'Fast CRM',
      kind: 'http',
      url: fastProvider.url,
      priority: 10,
      timeout_ms: 1000,
    });
    expect(fast.secret).toMatch(/^whsec_/);
    const slow = await ok<{ id: number; secret?: string }>(admin, 'POST', '/api/v1/contact_providers/', {
      name: 'Slow CRM',
      kind: 'http',
      url: slowProvider.url,
      priority: 5,
      timeout_ms: 300,
      secret: SLOW_SECRET,
    });
    expect(slow.secret).toBe(SLOW_SECRET);
    // A third one answers outside the protocol.
    const broken = await startReceiver({
      reply: () => ({ status: 200, headers: { 'content-type': 'application/json' }, body: '{"people":[]}' }),
    });
    const brokenProvider = await ok<{ id: number }>(admin, 'POST', '/api/v1/contact_providers/', {
      name: 'Broken CRM',
      kind: 'http',
      url: broken.url,
      priority: 50,
    });
    const listed = await ok<{ results: Array<Record<string, unknown>> }>(
      admin,
      'GET',
      '/api/v1/contact_providers/',
    );
    expect(listed.results.map((p) => p.name)).toEqual(['Slow CRM', 'Fast CRM', 'Broken CRM']);
    expect(listed.results.every((p) => !('secret' in p))).toBe(true);

    const started = Date.now();
    const found = await ok<{
      count: number;
      results: Array<{
        wa_id: string;
        name: string;
        provider: string | null;
        extra: unknown;
        resolved: boolean;
      }>;
      failed_providers: Array<{ id: number; name: string; error: string }>;
    }>(agent, 'GET', '/api/v1/contacts/?search=ana');
    expect(Date.now() - started).toBeLessThan(2500);
    expect(found.failed_providers).toEqual([
      { id: slow.id, name: 'Slow CRM', error: expect.stringContaining('300 ms') },
      { id: brokenProvider.id, name: 'Broken CRM', error: expect.stringContaining('outside the protocol') },
    ]);
    await ok(admin, 'DELETE', `/api/v1/contact_providers/${brokenProvider.id}/`);
    await broken.close();
    // Ana from the CRM (normalised number), merged with the customer who wrote: one contact.
    expect(found.results).toEqual([
      expect.objectContaining({
        wa_id: CUSTOMER,
        name: 'Ana Lima',
        provider: 'Fast CRM',
        extra: { customer_id: 'C-1' },
      }),
    ]);
    // The request was signed with the provider's secret, Standard Webhooks style.
    const req = fastProvider.requests.at(-1);
    const headers = receivedWebhookHeaders(req);
    expect(() => new Webhook(fast.secret).verify(req?.body ?? '', headers)).not.toThrow();
    expect(() => new Webhook(SLOW_SECRET).verify(req?.body ?? '', headers)).toThrow();
    expect(JSON.parse(req?.body ?? '{}')).toEqual({ type: 'search', query: 'ana', limit: 20 });

    // Customers only the network knows are the fallback.
    const carla = await ok<{ results: Array<{ name: string; provider: string | null }> }>(
      agent,
      'GET',
      '/api/v1/contacts/?search=carla',
    );
    expect(carla.results).toEqual([expect.objectContaining({ name: 'Carla', provider: null })]);

    const one = await ok<{ name: string; provider: string }>(agent, 'GET', `/api/v1/contacts/${CUSTOMER}/`);
    expect(one).toMatchObject({ name: 'Ana Lima', provider: 'Fast CRM' });
    expect((await call(agent, 'GET', '/api/v1/contacts/4915550007777/')).status).toBe(404);
    // Who reads Ana's chat sees its facts; who may not finds her only through the CRM, without them.
    const seenByAgent = await ok<Record<string, unknown>>(agent, 'GET', `/api/v1/contacts/${CUSTOMER}/`);
    expect(seenByAgent).toMatchObject({ resolved: false, waba_payload: { profile: { name: 'Ana' } } });
    expect(seenByAgent.messaging_window_expires_at).toEqual(expect.any(Number));
    const seenByAssigned = await ok<Record<string, unknown>>(
      agentAssigned,
      'GET',
      `/api/v1/contacts/${CUSTOMER}/`,
    );
    expect(seenByAssigned).toMatchObject({
      name: 'Ana Lima',
      provider: 'Fast CRM',
      last_message_timestamp: null,
      messaging_window_expires_at: null,
      waba_payload: { profile: { name: 'Ana Lima' } },
    });
    expect(
      (await ok<{ results: unknown[] }>(agentAssigned, 'GET', '/api/v1/contacts/?search=carla')).results,
    ).toEqual([]);
    // Agents do not manage providers.
    expect((await call(agent, 'GET', '/api/v1/contact_providers/')).status).toBe(403);
    await ok(admin, 'DELETE', `/api/v1/contact_providers/${slow.id}/`);
  });

  it('verifies, blocks and unblocks at the network, and reports', async () => {
    const verified = await ok<{ status: string }>(agent, 'POST', `/api/v1/contacts/${CUSTOMER}/verify/`);
    expect(verified.status).toBe('valid');
    expect(
      (await ok<{ status: string }>(agent, 'POST', '/api/v1/contacts/4915550007777/verify/')).status,
    ).toBe('invalid');

    const blockedAt = async () => {
      const res = await fetch(`${inbox.sandbox.url}/block_users`, {
        headers: { 'D360-API-KEY': inbox.env.NETWORK_API_KEY ?? '' },
      });
      return ((await res.json()) as { data: Array<{ wa_id: string }> }).data.map((d) => d.wa_id);
    };
    expect(await ok(agent, 'POST', `/api/v1/contacts/${CUSTOMER}/block/`)).toEqual({
      wa_id: CUSTOMER,
      blocked: true,
      reported: false,
    });
    expect(await blockedAt()).toContain(CUSTOMER);
    await ok(agent, 'DELETE', `/api/v1/contacts/${CUSTOMER}/block/`);
    expect(await blockedAt()).not.toContain(CUSTOMER);

    // The network blocks only customers who wrote in the last 24 hours.
    const refused = await call(agent, 'POST', '/api/v1/contacts/4915550007777/block/');
    expect([refused.status, (await json<{ code: string }>(refused)).code]).toEqual([409, 'block_refused']);

    expect(await ok(agent, 'POST', `/api/v1/contacts/${OTHER}/report/`, { reason: 'spam' })).toEqual({
      wa_id: OTHER,
      blocked: true,
      reported: true,
    });
    expect(await blockedAt()).toContain(OTHER);
    const log = await ok<{ results: Array<{ action: string; details: Record<string, unknown> }> }>(
      admin,
      'GET',
      `/api/v1/audit_logs/?target_id=${OTHER}`,
    );
    expect(log.results.map((e) => e.action)).toEqual(
      expect.arrayContaining(['contact.reported', 'contact.blocked']),
    );
    await ok(agent, 'DELETE', `/api/v1/contacts/${OTHER}/block/`);
    // An assigned-only agent may not act on a chat it cannot read.
    expect((await call(agentAssigned, 'POST', `/api/v1/contacts/${CUSTOMER}/block/`)).status).toBe(404);
  });
});

describe('tags, taggings and their history', () => {
  it('tags chats and messages once each, records every change, and filters chats by tag', async () => {
    const vip = await ok<{ id: number }>(agent, 'POST', '/api/v1/tags/', {
      name: 'vip',
      web_inbox_color: '#e91e63',
    });
    const dup = await call(agent, 'POST', '/api/v1/tags/', { name: 'VIP', web_inbox_color: '#000000' });
    expect([dup.status, (await json<{ code: string }>(dup)).code]).toEqual([409, 'tag_name_taken']);
    expect((await call(agentNoTags, 'GET', '/api/v1/tags/')).status).toBe(403);
    expect(
      (await call(agentNoTags, 'POST', '/api/v1/chat_tagging/', { chat: CUSTOMER, tag: vip.id })).status,
    ).toBe(403);
    // Not readable for the assigned-only agent: no such chat.
    expect(
      (await call(agentAssigned, 'POST', '/api/v1/chat_tagging/', { chat: CUSTOMER, tag: vip.id })).status,
    ).toBe(404);

    const tagging = await ok<{ id: number; chat: string; tag: number; created_by: number }>(
      agent,
      'POST',
      '/api/v1/chat_tagging/',
      { chat: CUSTOMER, tag: vip.id },
    );
    expect(tagging).toMatchObject({ chat: CUSTOMER, tag: vip.id, created_by: agentId });
    const again = await call(agent, 'POST', '/api/v1/chat_tagging/', { chat: CUSTOMER, tag: vip.id });
    expect([again.status, (await json<{ code: string }>(again)).code]).toEqual([409, 'already_tagged']);

    const byName = await ok<{ results: Array<{ wa_id: string; tags: Array<{ name: string }> }> }>(
      agent,
      'GET',
      '/api/v1/chats/?tag=vip',
    );
    expect(byName.results.map((c) => c.wa_id)).toEqual([CUSTOMER]);
    expect(byName.results[0]?.tags.map((t) => t.name)).toEqual(['vip']);
    expect((await ok<{ count: number }>(agent, 'GET', `/api/v1/chats/?tag=${vip.id}`)).count).toBe(1);
    expect((await ok<{ count: number }>(agent, 'GET', '/api/v1/chats/?tag=nobody')).count).toBe(0);

    const messages = await ok<{ results: Array<{ id: string }> }>(
      agent,
      'GET',
      `/api/v1/messages/?wa_id=${CUSTOMER}`,
    );
    const messageId = messages.results[0]?.id ?? '';
    const mt = await ok<{ id: number }>(agent, 'POST', '/api/v1/message_tagging/', {
      message: messageId,
      tag: vip.id,
    });
    expect(
      (await call(agent, 'POST', '/api/v1/message_tagging/', { message: messageId, tag: vip.id })).status,
    ).toBe(409);
    const message = await ok<{
      tags: Array<{ id: number; tagging_id: number }>;
      chat_tags: Array<{ id: number }>;
    }>(agent, 'GET', `/api/v1/messages/${messageId}/`);
    expect(message.tags).toEqual([expect.objectContaining({ id: vip.id, tagging_id: mt.id })]);
    expect(message.chat_tags).toEqual([expect.objectContaining({ id: vip.id, tagging_id: tagging.id })]);

    // Delete then re-create is fine; deleting the tag removes the rest, all recorded.
    await ok(agent, 'DELETE', `/api/v1/chat_tagging/${tagging.id}/`);
    await ok(agent, 'POST', '/api/v1/chat_tagging/', { chat: CUSTOMER, tag: vip.id });
    await ok(agent, 'DELETE', `/api/v1/tags/${vip.id}/`);
    const chatEvents = await ok<{
      results: Array<{ action: string; tag: number; chat: string; user: number }>;
    }>(agent, 'GET', `/api/v1/chat_tagging_events/?chat=${CUSTOMER}&tag=${vip.id}`);
    expect(chatEvents.results.map((e) => e.action)).toEqual(['removed', 'added', 'removed', 'added']);
    expect(chatEvents.results.every((e) => e.user === agentId && e.chat === CUSTOMER)).toBe(true);
    const messageEvents = await ok<{ results: Array<{ action: string; message: string }> }>(
      agent,
      'GET',
      `/api/v1/message_tagging_events/?message=${messageId}&user=${agentId}`,
    );
    expect(messageEvents.results.map((e) => [e.action, e.message])).toEqual([
      ['removed', messageId],
      ['added', messageId],
    ]);
    expect(
      (await ok<{ count: number }>(agent, 'GET', '/api/v1/chat_tagging_events/?since=4102444800')).count,
    ).toBe(0);
    expect((await call(agentNoTags, 'GET', '/api/v1/chat_tagging_events/')).status).toBe(403);
    // The assigned-only agent sees no history of chats it cannot read.
    expect((await ok<{ count: number }>(agentAssigned, 'GET', '/api/v1/chat_tagging_events/')).count).toBe(0);
    const log = await ok<{ results: Array<{ action: string }> }>(
      admin,
      'GET',
      `/api/v1/audit_logs/?target_id=${CUSTOMER}`,
    );
    expect(log.results.map((e) => e.action)).toEqual(
      expect.arrayContaining(['chat.tagged', 'chat.untagged']),
    );
  });
});

describe('saved responses', () => {
  it('are shared; admins edit all, users their own', async () => {
    const mine = await ok<{ id: number; created_by: number }>(agent, 'POST', '/api/v1/saved_responses/', {
      name: 'hours',
      text: 'We are open 9 to 18.',
      tags: ['faq'],
    });
    expect(mine.created_by).toBe(agentId);
    const admins = await ok<{ id: number }>(admin, 'POST', '/api/v1/saved_responses/', {
      name: 'thanks',
      text: 'Thank you for writing!',
    });
    expect((await ok<{ count: number }>(agentNoTags, 'GET', '/api/v1/saved_responses/')).count).toBe(2);
    expect((await ok<{ count: number }>(agent, 'GET', '/api/v1/saved_responses/?search=open')).count).toBe(1);
    expect((await call(agent, 'PATCH', `/api/v1/saved_responses/${admins.id}/`, { text: 'x' })).status).toBe(
      403,
    );
    expect((await call(agentNoTags, 'DELETE', `/api/v1/saved_responses/${mine.id}/`)).status).toBe(403);
    expect(
      await ok(agent, 'PATCH', `/api/v1/saved_responses/${mine.id}/`, { text: 'Open 9 to 19.' }),
    ).toMatchObject({
      text: 'Open 9 to 19.',
    });
    expect(
      await ok(admin, 'PATCH', `/api/v1/saved_responses/${mine.id}/`, { name: 'opening' }),
    ).toMatchObject({
      name: 'opening',
    });
    await ok(admin, 'DELETE', `/api/v1/saved_responses/${mine.id}/`);
    expect((await call(agent, 'GET', `/api/v1/saved_responses/${mine.id}/`)).status).toBe(404);
  });
});

// ---- Web Push: a loopback push service that decrypts with the subscription's keys ----

interface PushService {
  url: string;
  received: Buffer[];
  status: number;
  close(): Promise<void>;
}

async function startPushService(): Promise<PushService> {
  const svc = { received: [] as Buffer[], status: 201 };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      svc.received.push(Buffer.concat(chunks));
      res.writeHead(svc.status).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return Object.assign(svc, {
    url: `http://127.0.0.1:${port}/push/device-1`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  });
}

/** RFC 8291 (with RFC 8188 `aes128gcm`): what the user agent does with a push message. */
function decryptWebPush(body: Buffer, ua: ReturnType<typeof createECDH>, authSecret: Buffer): string {
  const salt = body.subarray(0, 16);
  const idlen = body.readUInt8(20);
  const asPublic = body.subarray(21, 21 + idlen);
  const ciphertext = body.subarray(21 + idlen);
  const ecdhSecret = ua.computeSecret(asPublic);
  const keyInfo = Buffer.concat([Buffer.from('WebPush: info\0'), ua.getPublicKey(), asPublic]);
  const ikm = Buffer.from(hkdfSync('sha256', ecdhSecret, authSecret, keyInfo, 32));
  const cek = Buffer.from(hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: aes128gcm\0'), 16));
  const nonce = Buffer.from(hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: nonce\0'), 12));
  const decipher = createDecipheriv('aes-128-gcm', cek, nonce);
  decipher.setAuthTag(ciphertext.subarray(ciphertext.length - 16));
  const padded = Buffer.concat([
    decipher.update(ciphertext.subarray(0, ciphertext.length - 16)),
    decipher.final(),
  ]);
  // The last record ends with the delimiter 0x02, then zero padding.
  let end = padded.length - 1;
  while (end >= 0 && padded[end] === 0) end--;
  expect(padded[end]).toBe(2);
  return padded.subarray(0, end).toString('utf8');
}

describe('push tokens and Web Push', () => {
  let push: PushService;
  beforeAll(async () => {
    push = await startPushService();
  });
  afterAll(async () => push?.close());

  it('keeps one record per token, own tokens only', async () => {
    const body = { token: 'fcm-device-token-123', platform: 'fcm', device_name: 'Phone' };
    const first = await call(agent, 'POST', '/api/v1/push_tokens/', body);
    expect(first.status).toBe(201);
    const created = await json<{ id: number; registered_at: number; expired: boolean }>(first);
    const second = await call(agent, 'POST', '/api/v1/push_tokens/', body);
    expect(second.status).toBe(200);
    expect((await json<{ id: number }>(second)).id).toBe(created.id);
    expect((await ok<{ count: number }>(agent, 'GET', '/api/v1/push_tokens/')).count).toBe(1);
    expect(created.expired).toBe(false);
    expect(
      (await call(agentNoTags, 'PATCH', `/api/v1/push_tokens/${created.id}/`, { enabled: false })).status,
    ).toBe(404);
    expect((await call(agentNoTags, 'DELETE', `/api/v1/push_tokens/${created.id}/`)).status).toBe(404);
    expect(
      await ok(agent, 'PATCH', `/api/v1/push_tokens/${created.id}/`, { device_name: 'Old phone' }),
    ).toMatchObject({
      device_name: 'Old phone',
    });
    // An empty PATCH changes nothing and answers the token as it is.
    expect(await ok(agent, 'PATCH', `/api/v1/push_tokens/${created.id}/`, {})).toMatchObject({
      device_name: 'Old phone',
    });
    await ok(agent, 'DELETE', `/api/v1/push_tokens/${created.id}/`);
  });

  it('sends a customer message as Web Push the push service can decrypt; a 410 deletes the token', async () => {
    const ua = createECDH('prime256v1');
    ua.generateKeys();
    const auth = randomBytes(16);
    const subscription = JSON.stringify({
      endpoint: push.url,
      keys: { p256dh: ua.getPublicKey().toString('base64url'), auth: auth.toString('base64url') },
    });
    const token = await ok<{ id: number }>(agent, 'POST', '/api/v1/push_tokens/', {
      token: subscription,
      platform: 'webpush',
    });
    // The assigned-only agent may not read the chat: its device gets nothing.
    const other = await startPushService();
    const ua2 = createECDH('prime256v1');
    ua2.generateKeys();
    await ok(agentAssigned, 'POST', '/api/v1/push_tokens/', {
      token: JSON.stringify({
        endpoint: other.url,
        keys: {
          p256dh: ua2.getPublicKey().toString('base64url'),
          auth: randomBytes(16).toString('base64url'),
        },
      }),
      platform: 'webpush',
    });

    // Another reader of the chat has one disabled token and one not registered again for 61 days.
    const disabledService = await startPushService();
    const expiredService = await startPushService();
    const subscriptionAt = (url: string) => {
      const keysOf = createECDH('prime256v1');
      keysOf.generateKeys();
      return JSON.stringify({
        endpoint: url,
        keys: {
          p256dh: keysOf.getPublicKey().toString('base64url'),
          auth: randomBytes(16).toString('base64url'),
        },
      });
    };
    await ok(agentNoTags, 'POST', '/api/v1/push_tokens/', {
      token: subscriptionAt(disabledService.url),
      platform: 'webpush',
      enabled: false,
    });
    const expired = await ok<{ id: number }>(agentNoTags, 'POST', '/api/v1/push_tokens/', {
      token: subscriptionAt(expiredService.url),
      platform: 'webpush',
    });
    const db = createDb<unknown>({ url: inbox.db.url, applicationName: 'organisation-test' });
    await sql`update push_tokens set registered_at = now() - interval '61 days' where id = ${expired.id}`.execute(
      db,
    );
    await db.destroy();
    const listed = await ok<{ results: Array<{ id: number; expired: boolean; enabled: boolean }> }>(
      agentNoTags,
      'GET',
      '/api/v1/push_tokens/',
    );
    expect(listed.results.map((t) => [t.enabled, t.expired])).toEqual([
      [false, false],
      [true, true],
    ]);

    await inbox.customerSays(CUSTOMER, {
      type: 'text',
      text: { body: 'Is my order ready?' },
      profile_name: 'Ana',
    });
    await waitFor(
      async () => push.received.length > 0,
      15_000,
      () => `a push at the push service (gateway: ${inbox.gateway.output().slice(-4000)})`,
    );
    const notification = JSON.parse(decryptWebPush(push.received[0] ?? Buffer.alloc(0), ua, auth)) as Record<
      string,
      unknown
    >;
    expect(notification).toMatchObject({ title: 'Ana', body: 'Is my order ready?', wa_id: CUSTOMER });
    await waitFor(
      async () =>
        (await ok<{ results: Array<{ last_used_at: number | null }> }>(agent, 'GET', '/api/v1/push_tokens/'))
          .results[0]?.last_used_at !== null,
      10_000,
      'last_used_at set',
    );
    // Once the notifier has settled the event, nobody else got anything.
    const nc = await connectNats(testNatsUrl(), 'organisation-test');
    const jsm = await jetstreamManager(nc);
    await waitFor(
      async () => {
        const info = await jsm.consumers.info(
          streamName(instanceId(inbox.env.INSTANCE_ID ?? ''), 'events'),
          'gateway-push',
        );
        return info.num_pending === 0 && info.num_ack_pending === 0;
      },
      15_000,
      'push notifier settled',
    );
    await nc.drain();
    expect([other.received, disabledService.received, expiredService.received]).toEqual([[], [], []]);
    await Promise.all([other.close(), disabledService.close(), expiredService.close()]);

    push.status = 410;
    await inbox.customerSays(CUSTOMER, { type: 'text', text: { body: 'Hello?' }, profile_name: 'Ana' });
    await waitFor(
      async () => (await ok<{ count: number }>(agent, 'GET', '/api/v1/push_tokens/')).count === 0,
      15_000,
      'token deleted after 410',
    );
    expect(push.received.length).toBe(2);
    void token;
  });

  it('follows the events only while someone has a live token, from the moment one is registered', async () => {
    const nc = await connectNats(testNatsUrl(), 'organisation-push-follow');
    const jsm = await jetstreamManager(nc);
    const instance = instanceId(inbox.env.INSTANCE_ID ?? '');
    const stream = streamName(instance, 'events');
    const followed = () =>
      jsm.consumers.info(stream, 'gateway-push').then(
        () => true,
        (err: unknown) => {
          if (isNotFound(err)) return false;
          throw err;
        },
      );
    const events = nc.subscribe(networkEvent.subject(instance));
    const stored: string[] = [];
    void (async () => {
      for await (const m of events) stored.push(new TextDecoder().decode(m.data));
    })();
    // Every token of every user goes: once the last deletion is answered, nobody follows.
    for (const a of [agent, agentAssigned, agentNoTags]) {
      const { results } = await ok<{ results: Array<{ id: number }> }>(a, 'GET', '/api/v1/push_tokens/');
      for (const t of results) await ok(a, 'DELETE', `/api/v1/push_tokens/${t.id}/`);
    }
    expect(await followed()).toBe(false);
    const unheard = await inbox.customerSays(CUSTOMER, { type: 'text', text: { body: 'Anyone there?' } });
    await waitFor(
      async () => stored.some((e) => e.includes(unheard.id)),
      15_000,
      'the unheard message stored',
    );

    const device = await startPushService();
    const ua = createECDH('prime256v1');
    ua.generateKeys();
    const auth = randomBytes(16);
    const created = await ok<{ id: number }>(agent, 'POST', '/api/v1/push_tokens/', {
      token: JSON.stringify({
        endpoint: device.url,
        keys: { p256dh: ua.getPublicKey().toString('base64url'), auth: auth.toString('base64url') },
      }),
      platform: 'webpush',
    });
    // Followed before the 201: the next message is notified, the one before it is not.
    expect(await followed()).toBe(true);
    await inbox.customerSays(CUSTOMER, { type: 'text', text: { body: 'Second try' }, profile_name: 'Ana' });
    await waitFor(
      async () => device.received.length > 0,
      15_000,
      () => `a push for the second message (gateway: ${inbox.gateway.output().slice(-4000)})`,
    );
    const bodies = () =>
      device.received.map((b) => (JSON.parse(decryptWebPush(b, ua, auth)) as { body: string }).body);
    expect(bodies()).toEqual(['Second try']);

    // The durable deleted under a follower (another gateway's check crossing a registration):
    // it is made again from where the follower was, and what arrived meanwhile is notified.
    await jsm.consumers.delete(stream, 'gateway-push');
    await inbox.customerSays(CUSTOMER, { type: 'text', text: { body: 'Third try' }, profile_name: 'Ana' });
    await waitFor(async () => bodies().includes('Third try'), 30_000, 'a push after the durable was lost');
    expect(bodies()).toEqual(['Second try', 'Third try']);

    await ok(agent, 'DELETE', `/api/v1/push_tokens/${created.id}/`);
    expect(await followed()).toBe(false);
    events.unsubscribe();
    await nc.drain();
    await device.close();
  });
});

describe('bad input on every new path', () => {
  const cases: Array<[string, string, string, unknown, number]> = [
    ['provider without url', 'POST', '/api/v1/contact_providers/', { name: 'x', kind: 'http' }, 400],
    [
      'provider of an unknown kind',
      'POST',
      '/api/v1/contact_providers/',
      { name: 'x', kind: 'ldap', url: 'https://a.example' },
      400,
    ],
    [
      'provider timeout too long',
      'POST',
      '/api/v1/contact_providers/',
      { name: 'x', kind: 'http', url: 'https://a.example', timeout_ms: 60_000 },
      400,
    ],
    [
      'provider secret that is no whsec_ secret',
      'POST',
      '/api/v1/contact_providers/',
      { name: 'x', kind: 'http', url: 'https://a.example', secret: 'short' },
      400,
    ],
    ['provider id not a number', 'GET', '/api/v1/contact_providers/abc/', undefined, 400],
    ['missing provider', 'PATCH', '/api/v1/contact_providers/999999/', { enabled: false }, 404],
    ['contact wa_id with a plus', 'GET', '/api/v1/contacts/+4915550001001/', undefined, 400],
    ['search too long', 'GET', `/api/v1/contacts/?search=${'a'.repeat(101)}`, undefined, 400],
    ['verify a short number', 'POST', '/api/v1/contacts/123/verify/', undefined, 400],
    ['report without reason', 'POST', `/api/v1/contacts/${CUSTOMER}/report/`, {}, 400],
    ['report with blank reason', 'POST', `/api/v1/contacts/${CUSTOMER}/report/`, { reason: '  ' }, 400],
    ['tag without colour', 'POST', '/api/v1/tags/', { name: 'x' }, 400],
    ['tag colour not #rrggbb', 'POST', '/api/v1/tags/', { name: 'x', web_inbox_color: 'red' }, 400],
    [
      'tag with an unknown field',
      'POST',
      '/api/v1/tags/',
      { name: 'x', web_inbox_color: '#000000', colour: 1 },
      400,
    ],
    ['missing tag', 'GET', '/api/v1/tags/999999/', undefined, 404],
    [
      'chat tagging with a missing tag',
      'POST',
      '/api/v1/chat_tagging/',
      { chat: CUSTOMER, tag: 999_999 },
      400,
    ],
    ['chat tagging of no chat', 'POST', '/api/v1/chat_tagging/', { chat: '4915550007777', tag: 1 }, 404],
    ['chat tagging with a bad wa_id', 'POST', '/api/v1/chat_tagging/', { chat: 'abc', tag: 1 }, 400],
    [
      'message tagging of no message',
      'POST',
      '/api/v1/message_tagging/',
      { message: 'wamid.none', tag: 1 },
      400,
    ],
    ['missing chat tagging', 'DELETE', '/api/v1/chat_tagging/999999/', undefined, 404],
    ['missing message tagging', 'DELETE', '/api/v1/message_tagging/999999/', undefined, 404],
    ['events with a bad since', 'GET', '/api/v1/chat_tagging_events/?since=yesterday', undefined, 400],
    ['events with a bad user', 'GET', '/api/v1/message_tagging_events/?user=-1', undefined, 400],
    ['saved response without text', 'POST', '/api/v1/saved_responses/', { name: 'x' }, 400],
    [
      'saved response with too many tags',
      'POST',
      '/api/v1/saved_responses/',
      { name: 'x', text: 'y', tags: Array(21).fill('t') },
      400,
    ],
    ['missing saved response', 'PATCH', '/api/v1/saved_responses/999999/', { text: 'y' }, 404],
    [
      'push token of an unknown platform',
      'POST',
      '/api/v1/push_tokens/',
      { token: 'x', platform: 'sms' },
      400,
    ],
    [
      'webpush token that is no subscription',
      'POST',
      '/api/v1/push_tokens/',
      { token: '{"endpoint":"x"}', platform: 'webpush' },
      400,
    ],
    [
      'webpush token with short keys',
      'POST',
      '/api/v1/push_tokens/',
      {
        token: JSON.stringify({ endpoint: 'https://p.example/x', keys: { p256dh: 'AAAA', auth: 'AAAA' } }),
        platform: 'webpush',
      },
      400,
    ],
    ['empty push token', 'POST', '/api/v1/push_tokens/', { token: '', platform: 'fcm' }, 400],
    ['push token with a NUL', 'POST', '/api/v1/push_tokens/', { token: 'a\u0000b', platform: 'fcm' }, 400],
    ['missing push token', 'DELETE', '/api/v1/push_tokens/999999/', undefined, 404],
  ];
  it.each(cases)('%s → %i', async (_name, method, path, body, status) => {
    const res = await call(agent, method, path, body);
    const answer = await res.text();
    // Providers are for admins: the agent's 403 would hide the input check.
    if (path.startsWith('/api/v1/contact_providers/')) {
      const asAdmin = await call(admin, method, path, body);
      expect([asAdmin.status, await asAdmin.text()]).toEqual([status, expect.any(String)]);
      return;
    }
    expect([res.status, answer]).toEqual([status, expect.stringContaining('"code"')]);
  });
});

describe('contacts, a page at a time', () => {
  it('pages through the customers who wrote in name order, each once, whoever wrote last', async () => {
    const customers = [
      ['491555000801', 'Zed Pager'],
      ['491555000802', 'Émile Pager'],
      ['491555000803', 'bob pager'],
      ['491555000804', 'amy pager'],
    ] as const;
    for (const [waId, name] of customers) {
      await inbox.customerSays(waId, { type: 'text', text: { body: 'paging' }, profile_name: name });
    }
    await waitFor(
      async () =>
        (await ok<{ count: number }>(admin, 'GET', '/api/v1/contacts/?search=pager&limit=1')).count === 4,
      15_000,
      'the four customers stored',
    );
    const names: string[] = [];
    for (let offset = 0; offset < 4; offset++) {
      const page = await ok<{ results: Array<{ name: string }> }>(
        admin,
        'GET',
        `/api/v1/contacts/?search=pager&limit=1&offset=${offset}`,
      );
      names.push(...page.results.map((c) => c.name));
    }
    // By name, ASCII letters in any case together; other letters after them.
    expect(names).toEqual(['amy pager', 'bob pager', 'Zed Pager', 'Émile Pager']);
  });
});
