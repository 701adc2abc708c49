import { receivedWebhookHeaders, startReceiver, waitFor } from '@switchboard/testkit';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiMessage, chatMessage, firstCustomerText, json, playedOut } from './support/api.ts';
import { ADMIN, type Inbox, startInboxAsAdmin } from './support/inbox.ts';

/**
 * Single-process mode: `services/inbox/src/main.ts` runs gateway, chats and fanout of one
 * instance in one process, with the environment the separate processes get. The messaging and
 * fan-out flows run against it end to end, then SIGTERM stops it cleanly.
 */

let inbox: Inbox;
let admin: string;

// Info logs, to see the process say what it runs and that it stopped.
beforeAll(
  async () =>
    ({ inbox, admin } = await startInboxAsAdmin({ singleProcess: true, env: { LOG_LEVEL: 'info' } })),
);
afterAll(async () => inbox?.stop());

const messageOf = (waId: string, id: string) => chatMessage(inbox, waId, admin, id);

describe('single process (services/inbox)', () => {
  it('is one process for gateway, chats, fanout and media', () => {
    expect(inbox.gateway.child.pid).toBeDefined();
    expect(new Set([inbox.gateway, inbox.chats, inbox.fanout, inbox.media]).size).toBe(1);
    const out = inbox.gateway.output();
    expect(out).toContain('inbox running: gateway, chats, fanout and media in one process');
    // One logger: each service logs on a child of it, named by `service`.
    for (const service of ['gateway', 'chats', 'fanout', 'media']) {
      expect(out).toMatch(new RegExp(`"name":"inbox"[^\\n]*"service":"${service}"`));
    }
  });

  it("stores and lists a customer message, sends a reply to the customer, and fans both out to a user's webhook, signed", async () => {
    // A per-user webhook of an agent (not an admin): the fan-out asks the gateway for the
    // owner's rights over the process's one NATS connection.
    const password = 'Lighthouse keeper sings at dawn 9';
    const created = await inbox.api('POST', '/api/v1/users/', {
      token: admin,
      body: {
        username: 'agent',
        password,
        permissions: { can_read_chats: 'all', can_write_to_chats: 'all' },
      },
    });
    expect(created.status, await created.clone().text()).toBe(201);
    const agent = await inbox.login('agent', password);
    const receiver = await startReceiver(() => ({ status: 204 }));
    const hook = await inbox.api('POST', '/api/v1/webhooks/waba/', {
      token: agent,
      body: { url: receiver.url },
    });
    expect(hook.status).toBe(201);
    const { secret } = await json<{ secret: string }>(hook);

    // Inbound: network → gateway → chats (stored, listed) → fanout (the user's webhook).
    const waId = '491700000777';
    const { sent, stored } = await firstCustomerText(
      inbox,
      admin,
      waId,
      'one process, please',
      'Uno Proceso',
    );
    expect(stored).toMatchObject({ wamid: sent.id, from_us: false, sender: null });
    expect(stored?.waba_payload).toMatchObject({ type: 'text', text: { body: 'one process, please' } });
    const chats = await json<{ results: Array<{ wa_id: string }> }>(
      await inbox.api('GET', '/api/v1/chats/', { token: admin }),
    );
    expect(chats.results.map((c) => c.wa_id)).toContain(waId);

    await waitFor(
      async () => receiver.requests.some((r) => r.body.includes(sent.id)),
      30_000,
      () => `webhook received the customer message (${inbox.fanout?.output().slice(-2000)})`,
    );
    const got = receiver.requests.find((r) => r.body.includes(sent.id));
    if (!got) throw new Error('not received');
    const headers = receivedWebhookHeaders(got);
    expect(() => new Webhook(secret).verify(got.body, headers)).not.toThrow();
    expect(() =>
      new Webhook(`whsec_${Buffer.alloc(32, 1).toString('base64')}`).verify(got.body, headers),
    ).toThrow();
    expect(JSON.parse(got.body)).toMatchObject({
      object: 'whatsapp_business_account',
      entry: [
        { changes: [{ value: { messages: [{ id: sent.id, text: { body: 'one process, please' } }] } }] },
      ],
    });

    // Send: gateway → chats (202, queued) → network → statuses back through inbound.
    const res = await inbox.api('POST', '/api/v1/messages/', {
      token: admin,
      body: { wa_id: waId, type: 'text', text: { body: 'Served by one process.' } },
    });
    expect(res.status).toBe(202);
    const accepted = await json<ApiMessage>(res);
    expect(accepted).toMatchObject({ from_us: true, sender: { username: ADMIN.username } });
    await waitFor(
      async () => playedOut(await messageOf(waId, accepted.id)),
      20_000,
      'sent, delivered and read',
    );
    const received = await json<unknown[]>(
      await fetch(`${inbox.sandbox.url}/sandbox/customers/${waId}/received`),
    );
    expect(JSON.stringify(received)).toContain('Served by one process.');
    // The reply's statuses reach the user's webhook too.
    await waitFor(
      async () => receiver.requests.some((r) => r.body.includes('"status":"read"')),
      30_000,
      'read status fanned out',
    );
    await receiver.close();
  });

  it('stores an upload and serves it back through the gateway, from the media service of the process', async () => {
    // A 1×1 PNG (signature and chunks per the PNG specification), written here.
    const png = Buffer.from(
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==',
      'base64',
    );
    const res = await fetch(`${inbox.url}/api/v1/media/?filename=dot.png`, {
      method: 'POST',
      headers: { authorization: `Token ${admin}`, 'content-type': 'image/png' },
      body: png,
    });
    expect(res.status).toBe(201);
    const { file } = await json<{ file: string }>(res);
    const got = await fetch(file);
    expect(Buffer.from(await got.arrayBuffer()).equals(png)).toBe(true);
  });

  it('stops cleanly on SIGTERM (exit 0)', async () => {
    const code = await inbox.gateway.stop('SIGTERM', 30_000);
    const out = inbox.gateway.output();
    expect(code, out.slice(-4000)).toBe(0);
    expect(out).toContain('"msg":"stopped"');
    expect(out).not.toContain('shutdown step failed');
  });
});
