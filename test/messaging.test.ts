import { createHmac } from 'node:crypto';
import { messagesWebhookBody } from '@switchboard/proto';
import { waitFor } from '@switchboard/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, type Inbox, startInbox } from './support/inbox.ts';

let inbox: Inbox;
let admin: string;

beforeAll(async () => {
  inbox = await startInbox();
  admin = await inbox.login();
});
afterAll(async () => inbox?.stop());

const json = async <T>(res: Response): Promise<T> => (await res.json()) as T;

interface MessageOut {
  id: string;
  wamid: string | null;
  from_us: boolean;
  waba_payload: Record<string, unknown>;
  waba_statuses: {
    sent?: number;
    delivered?: number;
    read?: number;
    failed?: { errors: Array<{ code: number }> };
  };
  contact: {
    wa_id: string;
    messaging_window_expires_at: number | null;
    waba_payload: { profile: { name: string } };
  };
  sender: { username: string } | null;
  timestamp: number;
}

async function messagesOf(waId: string, token = admin): Promise<MessageOut[]> {
  const res = await inbox.api('GET', `/api/v1/messages/?wa_id=${waId}&limit=100`, { token });
  if (res.status !== 200) return [];
  return (await json<{ results: MessageOut[] }>(res)).results;
}

function signedPost(body: string): Promise<Response> {
  const secret = inbox.sandbox.seed?.webhookSecret ?? '';
  return fetch(`${inbox.url}/api/v1/waba/webhook/`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
    },
    body,
  });
}

const NUMBER = { wabaId: 'waba', displayPhoneNumber: '1', phoneNumberId: '1' };
const now = () => String(Math.floor(Date.now() / 1000));

const statusBody = (wamid: string, waId: string, status: string, ts: number) =>
  JSON.stringify(
    messagesWebhookBody(NUMBER, {
      statuses: [{ id: wamid, status, timestamp: String(ts), recipient_id: waId }],
    }),
  );

describe('inbound', () => {
  it('a customer message creates person, chat and message and opens the window', async () => {
    const waId = '491700000001';
    const sent = await inbox.customerSays(waId, {
      type: 'text',
      text: { body: 'Hallo!' },
      profile_name: 'Erika Muster',
    });
    await waitFor(async () => (await messagesOf(waId)).length === 1, 15_000, 'stored message');
    const [m] = await messagesOf(waId);
    expect(m).toMatchObject({ wamid: sent.id, from_us: false, sender: null });
    expect(m?.waba_payload).toMatchObject({ type: 'text', text: { body: 'Hallo!' } });
    expect(m?.contact.waba_payload.profile.name).toBe('Erika Muster');
    expect(m?.contact.messaging_window_expires_at).toBe((m?.timestamp ?? 0) + 24 * 3600);
    const persons = await json<{ results: Array<{ wa_id: string }> }>(
      await inbox.api('GET', '/api/v1/persons/?search=erika', { token: admin }),
    );
    expect(persons.results.map((p) => p.wa_id)).toEqual([waId]);
    const chat = await json<{ new_messages: number; contact: { initials: string } }>(
      await inbox.api('GET', `/api/v1/chats/${waId}/`, { token: admin }),
    );
    expect(chat).toMatchObject({ new_messages: 1, contact: { initials: 'EM' } });
  });

  it('stores a network webhook delivered twice once', async () => {
    const waId = '491700000002';
    const body = JSON.stringify(
      messagesWebhookBody(NUMBER, {
        contacts: [{ profile: { name: 'Twice' }, wa_id: waId }],
        messages: [{ from: waId, id: 'wamid.twice', timestamp: now(), type: 'text', text: { body: 'once' } }],
      }),
    );
    const first = await signedPost(body);
    const again = await signedPost(body);
    expect(first.status).toBe(200);
    expect(again.status).toBe(200);
    // Caught at the gateway (the stream drops the second copy), not only by the unique wamid.
    expect(await first.json()).toEqual({ status: 'accepted', duplicate: false });
    expect(await again.json()).toEqual({ status: 'accepted', duplicate: true });
    await waitFor(async () => (await messagesOf(waId)).length === 1, 15_000, 'stored message');
    // A later, different body proves processing went on; the duplicate still did not add a message.
    await inbox.customerSays(waId, { type: 'text', text: { body: 'next' } });
    await waitFor(async () => (await messagesOf(waId)).length === 2, 15_000, 'second message');
  });

  it('keeps an unknown message type as it came', async () => {
    const waId = '491700000003';
    const body = JSON.stringify(
      messagesWebhookBody(NUMBER, {
        messages: [
          { from: waId, id: 'wamid.future', timestamp: now(), type: 'hologram', hologram: { depth: 3 } },
        ],
      }),
    );
    expect((await signedPost(body)).status).toBe(200);
    await waitFor(async () => (await messagesOf(waId)).length === 1, 15_000, 'stored message');
    expect((await messagesOf(waId))[0]?.waba_payload).toMatchObject({
      type: 'hologram',
      hologram: { depth: 3 },
    });
  });
});

describe('sending', () => {
  it('a reply is accepted with 202, reaches the customer and collects sent, delivered and read', async () => {
    const waId = '491700000010';
    await inbox.customerSays(waId, { type: 'text', text: { body: 'Can you help?' } });
    await waitFor(async () => (await messagesOf(waId)).length === 1, 15_000, 'inbound stored');
    const res = await inbox.api('POST', '/api/v1/messages/', {
      token: admin,
      body: { wa_id: waId, type: 'text', text: { body: 'Of course.' } },
    });
    expect(res.status).toBe(202);
    const accepted = await json<MessageOut>(res);
    expect(accepted).toMatchObject({
      from_us: true,
      waba_statuses: {},
      sender: { username: ADMIN.username },
    });
    await waitFor(
      async () => {
        const m = (await messagesOf(waId)).find((x) => x.id === accepted.id);
        return Boolean(m?.waba_statuses.read && m.waba_statuses.delivered && m.waba_statuses.sent);
      },
      20_000,
      'sent, delivered and read',
    );
    const received = await json<Array<{ type: string; text?: { body: string } }>>(
      await fetch(`${inbox.sandbox.url}/sandbox/customers/${waId}/received`),
    );
    expect(JSON.stringify(received)).toContain('Of course.');
  });

  it('answers 453 outside the window, accepts a template, and the template opens a new window', async () => {
    const waId = '491700000011';
    const dayAndAHourAgo = Math.floor(Date.now() / 1000) - 25 * 3600;
    await inbox.customerSays(waId, {
      type: 'text',
      text: { body: 'old' },
      timestamp: String(dayAndAHourAgo),
    });
    await waitFor(async () => (await messagesOf(waId)).length === 1, 15_000, 'backdated message stored');
    const closed = await inbox.api('POST', '/api/v1/messages/', {
      token: admin,
      body: { wa_id: waId, type: 'text', text: { body: 'too late' } },
    });
    expect(closed.status).toBe(453);
    expect(await closed.json()).toMatchObject({
      code: 'window_closed',
      messaging_window_expires_at: dayAndAHourAgo + 24 * 3600,
    });
    expect((await messagesOf(waId)).length).toBe(1);

    const template = await inbox.api('POST', '/api/v1/messages/', {
      token: admin,
      body: { wa_id: waId, type: 'template', template: { name: 'hello_world', language: { code: 'en_US' } } },
    });
    expect(template.status).toBe(202);
    const t = await json<MessageOut>(template);
    await waitFor(
      async () => Boolean((await messagesOf(waId)).find((m) => m.id === t.id)?.waba_statuses.sent),
      20_000,
      'template sent',
    );
    const reopened = await inbox.api('POST', '/api/v1/messages/', {
      token: admin,
      body: { wa_id: waId, type: 'text', text: { body: 'now it works' } },
    });
    expect(reopened.status).toBe(202);
  });

  it('rejects bad send payloads with 400 and fields', async () => {
    const res = await inbox.api('POST', '/api/v1/messages/', {
      token: admin,
      body: { wa_id: '+49 170', type: 'text' },
    });
    expect(res.status).toBe(400);
    const body = await json<{ code: string; fields: Record<string, string[]> }>(res);
    expect(body.code).toBe('validation_error');
    expect(Object.keys(body.fields)).toEqual(expect.arrayContaining(['wa_id', 'text']));
  });

  it('an Idempotency-Key retry returns the same message and sends once', async () => {
    const waId = '491700000012';
    await inbox.customerSays(waId, { type: 'text', text: { body: 'hi' } });
    await waitFor(async () => (await messagesOf(waId)).length === 1, 15_000, 'inbound stored');
    const send = () =>
      inbox.api('POST', '/api/v1/messages/', {
        token: admin,
        headers: { 'idempotency-key': 'retry-me-1' },
        body: { wa_id: waId, type: 'text', text: { body: 'exactly once' } },
      });
    const [a, b] = await Promise.all([send(), send()]);
    const c = await send();
    const ids = await Promise.all([a, b, c].map(async (r) => (await json<MessageOut>(r)).id));
    expect(new Set(ids).size).toBe(1);
    await waitFor(
      async () => Boolean((await messagesOf(waId)).find((m) => m.id === ids[0])?.wamid),
      20_000,
      'sent',
    );
    const received = await json<{ messages: unknown[] }>(
      await fetch(`${inbox.sandbox.url}/sandbox/customers/${waId}/received`),
    );
    expect(received.messages).toHaveLength(1);
  });

  it('a network rejection becomes a failed status with the network error', async () => {
    const waId = '491700000013';
    await inbox.customerSays(waId, { type: 'text', text: { body: 'hi' } });
    await waitFor(async () => (await messagesOf(waId)).length === 1, 15_000, 'inbound stored');
    await fetch(`${inbox.sandbox.url}/sandbox/customers/${waId}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ undeliverable: true }),
    });
    const res = await inbox.api('POST', '/api/v1/messages/', {
      token: admin,
      body: { wa_id: waId, type: 'text', text: { body: 'will fail' } },
    });
    const m = await json<MessageOut>(res);
    await waitFor(
      async () => Boolean((await messagesOf(waId)).find((x) => x.id === m.id)?.waba_statuses.failed),
      20_000,
      'failed status',
    );
    const failed = (await messagesOf(waId)).find((x) => x.id === m.id);
    expect(failed?.waba_statuses.failed?.errors[0]?.code).toBe(131026);
  });

  it('folds statuses arriving read before delivered into a consistent record', async () => {
    const waId = '491700000014';
    await inbox.customerSays(waId, { type: 'text', text: { body: 'hi' } });
    await waitFor(async () => (await messagesOf(waId)).length === 1, 15_000, 'inbound stored');
    await fetch(`${inbox.sandbox.url}/sandbox/customers/${waId}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ never_reads: true }),
    });
    const res = await inbox.api('POST', '/api/v1/messages/', {
      token: admin,
      body: { wa_id: waId, type: 'text', text: { body: 'status order' } },
    });
    const m = await json<MessageOut>(res);
    let wamid = '';
    await waitFor(
      async () => {
        wamid = (await messagesOf(waId)).find((x) => x.id === m.id)?.wamid ?? '';
        return wamid !== '';
      },
      20_000,
      'wamid',
    );
    const t = Math.floor(Date.now() / 1000) + 100;
    // Out of order and duplicated, as the network may deliver them.
    for (const [status, ts] of [
      ['read', t + 20],
      ['read', t + 20],
      ['delivered', t + 10],
      ['sent', t],
    ] as const) {
      expect((await signedPost(statusBody(wamid, waId, status, ts))).status).toBe(200);
    }
    await waitFor(
      async () => (await messagesOf(waId)).find((x) => x.id === m.id)?.waba_statuses.read === t + 20,
      15_000,
      'read folded',
    );
    const s = (await messagesOf(waId)).find((x) => x.id === m.id)?.waba_statuses;
    expect(s?.read).toBe(t + 20);
    expect(s?.delivered).toBeLessThanOrEqual(t + 20);
    expect(s?.sent).toBeLessThanOrEqual(s?.delivered ?? 0);
  });

  it('delays delivery through a network outage and completes it', async () => {
    const waId = '491700000015';
    await inbox.customerSays(waId, { type: 'text', text: { body: 'hi' } });
    await waitFor(async () => (await messagesOf(waId)).length === 1, 15_000, 'inbound stored');
    // More consecutive failures than the client retries by itself: the delivery command is
    // redelivered by JetStream after the client gives up.
    const faults = await fetch(`${inbox.sandbox.url}/sandbox/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ count: 6, status: 503 }),
    });
    expect(faults.status).toBeLessThan(300);
    const res = await inbox.api('POST', '/api/v1/messages/', {
      token: admin,
      body: { wa_id: waId, type: 'text', text: { body: 'through the outage' } },
    });
    expect(res.status).toBe(202);
    const m = await json<MessageOut>(res);
    await waitFor(
      async () => Boolean((await messagesOf(waId)).find((x) => x.id === m.id)?.wamid),
      60_000,
      'delivered after the outage',
    );
    const received = await json<{ messages: unknown[] }>(
      await fetch(`${inbox.sandbox.url}/sandbox/customers/${waId}/received`),
    );
    expect(received.messages).toHaveLength(1);
  });
});

describe('permissions', () => {
  it('an assigned-only agent sees its own chats and not the others', async () => {
    const mine = '491700000020';
    const other = '491700000021';
    for (const waId of [mine, other])
      await inbox.customerSays(waId, { type: 'text', text: { body: 'hello' } });
    await waitFor(
      async () => (await messagesOf(other)).length === 1 && (await messagesOf(mine)).length === 1,
      15_000,
      'both',
    );
    const created = await inbox.api('POST', '/api/v1/users/', {
      token: admin,
      body: {
        username: 'limited',
        password: 'a careful reader 9 phrase',
        permissions: { can_read_chats: 'assigned', can_write_to_chats: 'assigned' },
      },
    });
    const agentId = (await json<{ id: number }>(created)).id;
    const assign = await inbox.api('PATCH', `/api/v1/chat_assignment/${mine}/`, {
      token: admin,
      body: { assigned_to_user: agentId },
    });
    expect(assign.status).toBe(200);
    expect(await assign.json()).toMatchObject({ assigned_to_user: { id: agentId } });
    const agent = await inbox.login('limited', 'a careful reader 9 phrase');
    expect((await inbox.api('GET', `/api/v1/chats/${mine}/`, { token: agent })).status).toBe(200);
    expect((await inbox.api('GET', `/api/v1/chats/${other}/`, { token: agent })).status).toBe(404);
    expect((await inbox.api('GET', `/api/v1/messages/?wa_id=${other}`, { token: agent })).status).toBe(404);
    const list = await json<{ results: Array<{ wa_id: string }> }>(
      await inbox.api('GET', '/api/v1/chats/?limit=100', { token: agent }),
    );
    expect(list.results.map((c) => c.wa_id)).toEqual([mine]);
    const write = await inbox.api('POST', '/api/v1/messages/', {
      token: agent,
      body: { wa_id: other, type: 'text', text: { body: 'not mine' } },
    });
    expect(write.status).toBe(404);
  });

  it('resolving, reassigning a resolved chat reopens it, and the event log records it', async () => {
    const waId = '491700000030';
    await inbox.customerSays(waId, { type: 'text', text: { body: 'help' } });
    await waitFor(async () => (await messagesOf(waId)).length === 1, 15_000, 'stored');
    const resolved = await inbox.api('PATCH', `/api/v1/chats/${waId}/`, {
      token: admin,
      body: { resolved: true },
    });
    expect(await resolved.json()).toMatchObject({ resolved: true, contact: { resolved: true } });
    const me = await json<{ id: number }>(await inbox.api('GET', '/api/v1/users/me/', { token: admin }));
    const assigned = await inbox.api('PATCH', `/api/v1/chat_assignment/${waId}/`, {
      token: admin,
      body: { assigned_to_user: me.id },
    });
    expect(await assigned.json()).toMatchObject({ resolved: false });
    await waitFor(
      async () => {
        const log = await json<{ results: Array<{ action: string }> }>(
          await inbox.api('GET', `/api/v1/audit_logs/?target_type=chat&target_id=${waId}`, { token: admin }),
        );
        const actions = log.results.map((r) => r.action);
        // Assigned and reopened are recorded in the same millisecond; resolved came first.
        return (
          actions.length === 3 &&
          actions[2] === 'chat.resolved' &&
          actions.includes('chat.assigned') &&
          actions.includes('chat.reopened')
        );
      },
      10_000,
      'event log entries',
    );
  });

  it('unread filter and read marks count new messages per user', async () => {
    const waId = '491700000031';
    const first = await inbox.customerSays(waId, { type: 'text', text: { body: 'one' } });
    await inbox.customerSays(waId, { type: 'text', text: { body: 'two' } });
    await waitFor(async () => (await messagesOf(waId)).length === 2, 15_000, 'stored');
    void first;
    const unread = await json<{ results: Array<{ wa_id: string; new_messages: number }> }>(
      await inbox.api('GET', '/api/v1/chats/?unread=true&limit=100', { token: admin }),
    );
    expect(unread.results.find((c) => c.wa_id === waId)?.new_messages).toBe(2);
    const newest = (await messagesOf(waId))[0]?.timestamp ?? 0;
    const mark = await inbox.api('POST', '/api/v1/mark_as_received/', {
      token: admin,
      body: { customer_wa_id: waId, timestamp: newest },
    });
    expect(await mark.json()).toMatchObject({ new_messages: 0 });
    const after = await json<{ results: Array<{ wa_id: string }> }>(
      await inbox.api('GET', '/api/v1/chats/?unread=true&limit=100', { token: admin }),
    );
    expect(after.results.map((c) => c.wa_id)).not.toContain(waId);
  });
});

describe('bad input', () => {
  it('answers clear 4xx errors and never a 500', async () => {
    const waId = '491700000050';
    await inbox.customerSays(waId, { type: 'text', text: { body: 'hi' } });
    await waitFor(async () => (await messagesOf(waId)).length === 1, 15_000, 'stored');
    const cases: Array<[string, string, unknown, number, string]> = [
      ['PATCH', `/api/v1/chat_assignment/${waId}/`, { assigned_to_user: 999_999 }, 400, 'validation_error'],
      ['PATCH', `/api/v1/chat_assignment/${waId}/`, { assigned_group: 999_999 }, 400, 'validation_error'],
      ['PATCH', '/api/v1/chat_assignment/491799999999/', { assigned_to_user: null }, 404, 'not_found'],
      ['GET', '/api/v1/chats/491799999999/', undefined, 404, 'not_found'],
      ['GET', '/api/v1/chats/not-a-number/', undefined, 400, 'validation_error'],
      ['PATCH', `/api/v1/chats/${waId}/`, { resolved: 'yes' }, 400, 'validation_error'],
      ['GET', '/api/v1/messages/', undefined, 400, 'validation_error'],
      ['GET', '/api/v1/messages/?wa_id=491799999999', undefined, 404, 'not_found'],
      ['GET', '/api/v1/messages/00000000-0000-4000-8000-000000000000/', undefined, 404, 'not_found'],
      ['POST', '/api/v1/mark_as_received/', { customer_wa_id: waId, timestamp: -1 }, 400, 'validation_error'],
      [
        'POST',
        '/api/v1/messages/',
        { wa_id: waId, type: 'telepathy', telepathy: {} },
        400,
        'validation_error',
      ],
      [
        'POST',
        '/api/v1/messages/',
        { wa_id: waId, type: 'image', image: { caption: 'no source' } },
        400,
        'validation_error',
      ],
      ['GET', '/api/v1/chats/?limit=1000', undefined, 400, 'validation_error'],
    ];
    for (const [method, path, body, status, code] of cases) {
      const res = await inbox.api(method, path, { token: admin, ...(body !== undefined && { body }) });
      expect([method, path, res.status]).toEqual([method, path, status]);
      expect(((await res.json()) as { code: string }).code).toBe(code);
    }
    const raw = await fetch(`${inbox.url}/api/v1/messages/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Token ${admin}` },
      body: '{"wa_id": ',
    });
    expect(raw.status).toBe(400);
  });
});

describe('templates and account', () => {
  it('lists templates from the network and the connected number', async () => {
    const t = await json<{ results: Array<{ name: string }> }>(
      await inbox.api('GET', '/api/v1/templates/', { token: admin }),
    );
    expect(t.results.map((x) => x.name)).toContain('hello_world');
    const refreshed = await inbox.api('GET', '/api/v1/templates/?refresh=true', { token: admin });
    expect(refreshed.status).toBe(200);
    const acc = await json<{ results: Array<{ phone_number: string; webhook_url: string }> }>(
      await inbox.api('GET', '/api/v1/whatsapp_accounts/', { token: admin }),
    );
    expect(acc.results[0]?.webhook_url).toBe(`${inbox.url}/api/v1/waba/webhook/`);
  });
});

describe('crash safety', () => {
  it('killing the chats worker while messages flow loses none', async () => {
    const waId = '491700000040';
    const total = 30;
    const sending = (async () => {
      for (let i = 0; i < total; i++)
        await inbox.customerSays(waId, { type: 'text', text: { body: `n${i}` } });
    })();
    await waitFor(async () => (await messagesOf(waId)).length >= 5, 20_000, 'some stored');
    await inbox.chats.stop('SIGKILL');
    await sending;
    await inbox.restartChats();
    await waitFor(async () => (await messagesOf(waId)).length === total, 60_000, `all ${total} stored`);
    const bodies = new Set((await messagesOf(waId)).map((m) => JSON.stringify(m.waba_payload)));
    expect(bodies.size).toBe(total);
  });
});
