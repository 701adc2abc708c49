import { messagesWebhookBody } from '@switchboard/proto';
import { waitFor } from '@switchboard/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ApiMessage,
  chatMessage,
  chatMessages,
  firstCustomerText,
  json,
  playedOut,
} from './support/api.ts';
import { ADMIN, type Inbox, startInboxAsAdmin } from './support/inbox.ts';

let inbox: Inbox;
let admin: string;

beforeAll(async () => ({ inbox, admin } = await startInboxAsAdmin()));
afterAll(async () => inbox?.stop());

/** An integer of POSIX seconds within `slack` seconds of now (milliseconds or ISO strings fail). */
function expectRecentSeconds(value: unknown, what: string, slack = 15, offset = 0): void {
  const now = Math.floor(Date.now() / 1000) + offset;
  expect([what, Number.isInteger(value)]).toEqual([what, true]);
  expect([what, Math.abs((value as number) - now) <= slack]).toEqual([what, true]);
}

/** The path and query of a link the API answered (absolute, on the inbox's public URL). */
const pathOf = (link: string) => {
  const u = new URL(link);
  return `${u.pathname}${u.search}`;
};

const messagesOf = (waId: string, token = admin) => chatMessages(inbox, waId, token);
const messageOf = (waId: string, id: string) => chatMessage(inbox, waId, admin, id);

/** A customer whose only message is 25 hours old (the care window closed an hour ago): its window's end. */
async function customerWroteADayAgo(waId: string): Promise<number> {
  const dayAndAHourAgo = Math.floor(Date.now() / 1000) - 25 * 3600;
  await inbox.customerSays(waId, { type: 'text', text: { body: 'old' }, timestamp: String(dayAndAHourAgo) });
  await waitFor(async () => (await messagesOf(waId)).length === 1, 15_000, 'backdated message stored');
  return dayAndAHourAgo + 24 * 3600;
}

/** Sends template `name` (202) and waits for its `status` (`sent`, or `failed` when the network refuses it). */
async function templateReaches(waId: string, name: string, status: 'sent' | 'failed'): Promise<void> {
  const template = await inbox.api('POST', '/api/v1/messages/', {
    token: admin,
    body: { wa_id: waId, type: 'template', template: { name, language: { code: 'en_US' } } },
  });
  expect(template.status).toBe(202);
  const t = await json<ApiMessage>(template);
  await waitFor(
    async () => Boolean((await messageOf(waId, t.id))?.waba_statuses[status]),
    20_000,
    `template ${status}`,
  );
}

/**
 * A text from the admin to a customer who wrote first (the window is open) and whose sandbox
 * settings (`undeliverable`, `never_reads`, …) are `settings`.
 */
async function sendToCustomerWho(waId: string, settings: Record<string, boolean>, text: string) {
  await inbox.customerSays(waId, { type: 'text', text: { body: 'hi' } });
  await waitFor(async () => (await messagesOf(waId)).length === 1, 15_000, 'inbound stored');
  await fetch(`${inbox.sandbox.url}/sandbox/customers/${waId}`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(settings),
  });
  const res = await inbox.api('POST', '/api/v1/messages/', {
    token: admin,
    body: { wa_id: waId, type: 'text', text: { body: text } },
  });
  return json<ApiMessage>(res);
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
  it('persons list the customer who wrote last first', async () => {
    const wrote = async (waId: string, wamid: string, ts: number) =>
      expect(
        (
          await inbox.networkPost(
            JSON.stringify(
              messagesWebhookBody(NUMBER, {
                contacts: [{ profile: { name: `Ordered ${waId.slice(-1)}` }, wa_id: waId }],
                messages: [
                  { from: waId, id: wamid, timestamp: String(ts), type: 'text', text: { body: 'hi' } },
                ],
              }),
            ),
          )
        ).status,
      ).toBe(200);
    // The network delivers late: the second webhook carries the older message.
    const t = Math.floor(Date.now() / 1000);
    // Against the order of wa_ids too, so that a tie (both folded at once) cannot pass either.
    await wrote('491700000092', 'wamid.ordered.1', t - 10);
    await wrote('491700000091', 'wamid.ordered.2', t - 20);
    const order = async () =>
      (
        await json<{ results: Array<{ wa_id: string }> }>(
          await inbox.api('GET', '/api/v1/persons/?search=ordered', { token: admin }),
        )
      ).results.map((p) => p.wa_id);
    await waitFor(async () => (await order()).length === 2, 15_000, 'both persons stored');
    expect(await order()).toEqual(['491700000092', '491700000091']);
  });

  it('a customer message creates person, chat and message and opens the window', async () => {
    const waId = '491700000001';
    const { sent, stored: m } = await firstCustomerText(inbox, admin, waId, 'Hallo!', 'Erika Muster');
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
    const first = await inbox.networkPost(body);
    const again = await inbox.networkPost(body);
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
    expect((await inbox.networkPost(body)).status).toBe(200);
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
    const accepted = await json<ApiMessage>(res);
    expect(accepted).toMatchObject({
      from_us: true,
      waba_statuses: {},
      sender: { username: ADMIN.username },
    });
    await waitFor(
      async () => playedOut(await messageOf(waId, accepted.id)),
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
    const windowEnd = await customerWroteADayAgo(waId);
    const closed = await inbox.api('POST', '/api/v1/messages/', {
      token: admin,
      body: { wa_id: waId, type: 'text', text: { body: 'too late' } },
    });
    expect(closed.status).toBe(453);
    expect(await closed.json()).toMatchObject({
      code: 'window_closed',
      messaging_window_expires_at: windowEnd,
    });
    expect((await messagesOf(waId)).length).toBe(1);

    await templateReaches(waId, 'hello_world', 'sent');
    const reopened = await inbox.api('POST', '/api/v1/messages/', {
      token: admin,
      body: { wa_id: waId, type: 'text', text: { body: 'now it works' } },
    });
    expect(reopened.status).toBe(202);
  });

  it('a template the network refuses opens no window', async () => {
    const waId = '491700000093';
    const windowEnd = await customerWroteADayAgo(waId);
    await templateReaches(waId, 'no_such_template', 'failed');
    const stillClosed = await inbox.api('POST', '/api/v1/messages/', {
      token: admin,
      body: { wa_id: waId, type: 'text', text: { body: 'not yet' } },
    });
    expect(stillClosed.status).toBe(453);
    expect(await stillClosed.json()).toMatchObject({ messaging_window_expires_at: windowEnd });
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
    const [id, ...retries] = await Promise.all([a, b, c].map(async (r) => (await json<ApiMessage>(r)).id));
    expect(retries).toEqual([id, id]);
    await waitFor(async () => Boolean((await messageOf(waId, id ?? ''))?.wamid), 20_000, 'sent');
    const received = await json<{ messages: unknown[] }>(
      await fetch(`${inbox.sandbox.url}/sandbox/customers/${waId}/received`),
    );
    expect(received.messages).toHaveLength(1);
  });

  it('a network rejection becomes a failed status with the network error', async () => {
    const waId = '491700000013';
    const m = await sendToCustomerWho(waId, { undeliverable: true }, 'will fail');
    await waitFor(
      async () => Boolean((await messageOf(waId, m.id))?.waba_statuses.failed),
      20_000,
      'failed status',
    );
    const failed = await messageOf(waId, m.id);
    expect(failed?.waba_statuses.failed?.errors[0]?.code).toBe(131026);
  });

  it('folds statuses arriving read before delivered into a consistent record', async () => {
    const waId = '491700000014';
    const m = await sendToCustomerWho(waId, { never_reads: true }, 'status order');
    let wamid = '';
    await waitFor(
      async () => {
        wamid = (await messageOf(waId, m.id))?.wamid ?? '';
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
      expect((await inbox.networkPost(statusBody(wamid, waId, status, ts))).status).toBe(200);
    }
    await waitFor(
      async () => (await messageOf(waId, m.id))?.waba_statuses.read === t + 20,
      15_000,
      'read folded',
    );
    const s = (await messageOf(waId, m.id))?.waba_statuses;
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
    const m = await json<ApiMessage>(res);
    await waitFor(
      async () => Boolean((await messageOf(waId, m.id))?.wamid),
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

  it('an assignment of the user and one of the group at the same moment both apply', async () => {
    const me = await json<{ id: number }>(await inbox.api('GET', '/api/v1/users/me/', { token: admin }));
    const group = await json<{ id: number }>(
      await inbox.api('POST', '/api/v1/groups/', { token: admin, body: { name: 'Assign race' } }),
    );
    for (let i = 0; i < 5; i++) {
      const waId = `49170000095${i}`;
      await inbox.customerSays(waId, { type: 'text', text: { body: 'who answers?' } });
      await waitFor(async () => (await messagesOf(waId)).length === 1, 15_000, 'stored');
      const assign = (body: Record<string, unknown>) =>
        inbox.api('PATCH', `/api/v1/chat_assignment/${waId}/`, { token: admin, body });
      const answers = await Promise.all([
        assign({ assigned_to_user: me.id }),
        assign({ assigned_group: group.id }),
      ]);
      expect(answers.map((a) => a.status)).toEqual([200, 200]);
      const chat = await json<{ assigned_to_user: unknown; assigned_group: unknown }>(
        await inbox.api('GET', `/api/v1/chats/${waId}/`, { token: admin }),
      );
      expect(chat).toMatchObject({
        assigned_to_user: expect.objectContaining({ id: me.id }),
        assigned_group: expect.objectContaining({ id: group.id }),
      });
    }
  });

  it('a deleted group is no chat’s assignee any more, and the chat’s log says so', async () => {
    const waId = '491700000960';
    await inbox.customerSays(waId, { type: 'text', text: { body: 'for the night shift' } });
    await waitFor(async () => (await messagesOf(waId)).length === 1, 15_000, 'stored');
    const group = await json<{ id: number }>(
      await inbox.api('POST', '/api/v1/groups/', { token: admin, body: { name: 'Night shift' } }),
    );
    const assigned = await inbox.api('PATCH', `/api/v1/chat_assignment/${waId}/`, {
      token: admin,
      body: { assigned_group: group.id },
    });
    expect(assigned.status).toBe(200);
    expect((await inbox.api('DELETE', `/api/v1/groups/${group.id}/`, { token: admin })).status).toBe(204);
    await waitFor(
      async () => {
        const log = await json<{ results: Array<{ action: string; details: Record<string, unknown> }> }>(
          await inbox.api('GET', `/api/v1/audit_logs/?target_type=chat&target_id=${waId}`, { token: admin }),
        );
        return log.results.some(
          (r) => r.action === 'chat.unassigned' && r.details.reason === 'group_deleted',
        );
      },
      15_000,
      'the unassignment in the chat’s log',
    );
    const listed = await json<{ count: number }>(
      await inbox.api('GET', `/api/v1/chats/?assigned_group=${group.id}`, { token: admin }),
    );
    expect(listed.count).toBe(0);
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
      // A limit past the maximum is clamped (see 'one API model'); below 1 or not a number is not.
      ['GET', '/api/v1/chats/?limit=0', undefined, 400, 'validation_error'],
      ['GET', '/api/v1/chats/?limit=abc', undefined, 400, 'validation_error'],
      ['GET', '/api/v1/chats/?limit=2.5', undefined, 400, 'validation_error'],
      ['GET', `/api/v1/messages/?wa_id=${waId}&limit=-1`, undefined, 400, 'validation_error'],
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

describe('one API model', () => {
  it('answers every time as integer POSIX seconds', async () => {
    const waId = '491700000061';
    await inbox.customerSays(waId, { type: 'text', text: { body: 'what time is it?' }, profile_name: 'Tim' });
    await waitFor(async () => (await messagesOf(waId)).length === 1, 15_000, 'inbound stored');
    const [inbound] = await messagesOf(waId);
    expectRecentSeconds(inbound?.timestamp, 'customer message timestamp');

    const res = await inbox.api('POST', '/api/v1/messages/', {
      token: admin,
      body: { wa_id: waId, type: 'text', text: { body: 'noon' } },
    });
    expect(res.status).toBe(202);
    const sent = await json<ApiMessage>(res);
    expectRecentSeconds(sent.timestamp, 'sent message timestamp');
    expect([sent.before_time, sent.since_time]).toEqual([sent.timestamp, sent.timestamp]);
    await waitFor(
      async () => Boolean((await messageOf(waId, sent.id))?.waba_statuses.sent),
      20_000,
      'sent status',
    );
    expectRecentSeconds((await messageOf(waId, sent.id))?.waba_statuses.sent, 'waba_statuses.sent');

    const chat = await json<{ contact: ApiMessage['contact'] & { last_message_timestamp: number } }>(
      await inbox.api('GET', `/api/v1/chats/${waId}/`, { token: admin }),
    );
    expectRecentSeconds(chat.contact.last_message_timestamp, 'contact.last_message_timestamp');
    expectRecentSeconds(
      chat.contact.messaging_window_expires_at,
      'contact.messaging_window_expires_at',
      60,
      24 * 3600,
    );

    const persons = await json<{ results: Array<{ first_seen_at: number }> }>(
      await inbox.api('GET', `/api/v1/persons/?search=${waId}`, { token: admin }),
    );
    expectRecentSeconds(persons.results[0]?.first_seen_at, 'persons first_seen_at');

    const templates = await json<{ fetched_at: number }>(
      await inbox.api('GET', '/api/v1/templates/?refresh=true', { token: admin }),
    );
    expectRecentSeconds(templates.fetched_at, 'templates fetched_at');

    const mark = await json<{ timestamp: number }>(
      await inbox.api('POST', '/api/v1/mark_as_received/', {
        token: admin,
        body: { customer_wa_id: waId, timestamp: inbound?.timestamp },
      }),
    );
    expect(mark.timestamp).toBe(inbound?.timestamp);

    await inbox.api('PATCH', `/api/v1/chats/${waId}/`, { token: admin, body: { resolved: true } });
    const log = await json<{ results: Array<{ action: string; at: number }> }>(
      await inbox.api('GET', `/api/v1/audit_logs/?target_type=chat&target_id=${waId}`, { token: admin }),
    );
    const resolved = log.results.find((r) => r.action === 'chat.resolved');
    expectRecentSeconds(resolved?.at, 'audit_logs at');
  });

  it('answers every list as {count, next, previous, results} and clamps a limit past the maximum', async () => {
    const lists = [
      '/api/v1/chats/',
      '/api/v1/persons/',
      '/api/v1/templates/',
      '/api/v1/whatsapp_accounts/',
      '/api/v1/users/',
      '/api/v1/groups/',
      '/api/v1/audit_logs/',
      '/api/v1/waba/dead_letters/',
    ];
    for (const path of lists) {
      const res = await inbox.api('GET', `${path}?limit=100000`, { token: admin });
      expect([path, res.status]).toEqual([path, 200]);
      const body = await json<Record<string, unknown> & { count: number; results: unknown[] }>(res);
      expect([path, ...Object.keys(body).filter((k) => k !== 'fetched_at')]).toEqual([
        path,
        'count',
        'next',
        'previous',
        'results',
      ]);
      // The maximum page size is 100: a longer list links its second page with limit=100.
      expect([path, body.results.length]).toEqual([path, Math.min(body.count, 100)]);
      if (body.count > 100) expect(body.next).toMatch(/limit=100&offset=100/);
      for (const bad of ['0', '-5', 'ten', '1.5']) {
        const refused = await inbox.api('GET', `${path}?limit=${bad}`, { token: admin });
        expect([path, bad, refused.status]).toEqual([path, bad, 400]);
      }
    }
    // Messages page by time, not offset, with the same clamp.
    const waId = '491700000064';
    await inbox.customerSays(waId, { type: 'text', text: { body: 'hi' } });
    await waitFor(async () => (await messagesOf(waId)).length === 1, 15_000, 'inbound stored');
    const messages = await inbox.api('GET', `/api/v1/messages/?wa_id=${waId}&limit=100000`, { token: admin });
    expect(messages.status).toBe(200);
    expect((await json<{ results: unknown[] }>(messages)).results).toHaveLength(1);
  });

  it('pages templates and the connected number with limit and offset', async () => {
    type Page = {
      count: number;
      next: string | null;
      previous: string | null;
      results: Array<{ name: string }>;
    };
    const first = await json<Page>(await inbox.api('GET', '/api/v1/templates/?limit=2', { token: admin }));
    expect(first.count).toBeGreaterThan(2);
    expect(first.results).toHaveLength(2);
    expect(first.previous).toBeNull();
    expect(first.next).toMatch(/\/api\/v1\/templates\/\?limit=2&offset=2$/);
    const second = await json<Page>(await inbox.api('GET', pathOf(first.next ?? ''), { token: admin }));
    expect(second.count).toBe(first.count);
    expect(second.previous).toMatch(/limit=2&offset=0$/);
    expect(second.results.map((t) => t.name)).not.toEqual(first.results.map((t) => t.name));
    const all = await json<Page>(await inbox.api('GET', '/api/v1/templates/?limit=100', { token: admin }));
    expect(all.results).toHaveLength(all.count);
    expect(all.results.slice(2, 4)).toEqual(second.results);

    const accounts = await json<Page & { results: Array<{ phone_number: string }> }>(
      await inbox.api('GET', '/api/v1/whatsapp_accounts/?limit=1', { token: admin }),
    );
    expect(accounts).toMatchObject({ count: 1, next: null, previous: null });
    expect(accounts.results).toHaveLength(1);
    const beyond = await json<Page>(
      await inbox.api('GET', '/api/v1/whatsapp_accounts/?offset=1', { token: admin }),
    );
    expect(beyond).toMatchObject({ count: 1, results: [] });
    expect(beyond.previous).toMatch(/[?&]offset=0(&|$)/);
  });

  it('holds every wa_id to one rule: digits only, 5 to 20', async () => {
    const waId = '491700000062';
    await inbox.customerSays(waId, { type: 'text', text: { body: 'hi' } });
    await waitFor(async () => (await messagesOf(waId)).length === 1, 15_000, 'inbound stored');
    for (const bad of [`+${waId}`, '49170abc00062', '4917 000 0062', '1234', '1'.repeat(21), '']) {
      const send = await inbox.api('POST', '/api/v1/messages/', {
        token: admin,
        body: { wa_id: bad, type: 'text', text: { body: 'hello' } },
      });
      expect([bad, send.status]).toEqual([bad, 400]);
      const body = await json<{ code: string; fields: Record<string, string[]> }>(send);
      expect([bad, body.code, Object.keys(body.fields)]).toEqual([bad, 'validation_error', ['wa_id']]);
    }
    const refused: Array<[string, string, unknown, string]> = [
      ['POST', '/api/v1/mark_as_received/', { customer_wa_id: `+${waId}`, timestamp: 1 }, 'customer_wa_id'],
      ['POST', '/api/v1/users/', { username: 'plus', assigned_wa_ids: [`+${waId}`] }, 'assigned_wa_ids.0'],
      ['GET', `/api/v1/messages/?wa_id=%2B${waId}`, undefined, 'wa_id'],
      ['GET', '/api/v1/chats/4917abc/', undefined, 'wa_id'],
      ['PATCH', '/api/v1/chat_assignment/1234/', { assigned_to_user: null }, 'wa_id'],
    ];
    for (const [method, path, body, field] of refused) {
      const res = await inbox.api(method, path, { token: admin, ...(body !== undefined && { body }) });
      expect([path, res.status]).toEqual([path, 400]);
      expect(Object.keys((await json<{ fields: Record<string, string[]> }>(res)).fields)).toContain(field);
    }
    // Five digits are a wa_id (short national numbers exist), and a user may be given one.
    const five = await inbox.api('POST', '/api/v1/users/', {
      token: admin,
      body: { username: 'five', assigned_wa_ids: ['12345'] },
    });
    expect(five.status).toBe(201);
    const user = await json<{ id: number; assigned_wa_ids: string[] }>(five);
    expect(user.assigned_wa_ids).toEqual(['12345']);
    await inbox.api('DELETE', `/api/v1/users/${user.id}/`, { token: admin });
  });

  it('carries before_time and since_time on every message and pages by them without loss', async () => {
    const waId = '491700000063';
    const t = Math.floor(Date.now() / 1000) - 3600;
    // Seconds holding several messages, so a page of two would end inside one of them.
    const seconds = [t - 10, t - 10, t - 10, t - 9, t - 8, t - 8, t - 7];
    for (const [i, ts] of seconds.entries()) {
      await inbox.customerSays(waId, { type: 'text', text: { body: `m${i}` }, timestamp: String(ts) });
    }
    await waitFor(async () => (await messagesOf(waId)).length === seconds.length, 15_000, 'all stored');
    const all = await messagesOf(waId);
    for (const m of all) expect([m.before_time, m.since_time]).toEqual([m.timestamp, m.timestamp]);
    const newestFirst = all.map((m) => m.timestamp);
    expect(newestFirst).toEqual([...newestFirst].sort((a, b) => b - a));

    type Page = { next: string | null; previous: string | null; results: ApiMessage[] };
    const walk = async (start: string, follow: 'next' | 'previous') => {
      const pages: ApiMessage[][] = [];
      for (let path: string | null = start; path && pages.length < 20; ) {
        const page: Page = await json<Page>(await inbox.api('GET', path, { token: admin }));
        if (!page.results.length) break;
        pages.push(page.results);
        const link: string | null = page[follow];
        path = link ? pathOf(link) : null;
      }
      return pages;
    };

    // Backwards from the newest, by `next` (`before_time` of the last message).
    const back = await walk(`/api/v1/messages/?wa_id=${waId}&limit=2`, 'next');
    expect(back.flat().map((m) => m.id)).toEqual(all.map((m) => m.id));
    // No page ends inside a second: consecutive pages never share one.
    for (let i = 1; i < back.length; i++) {
      expect(back[i - 1]?.at(-1)?.timestamp).toBeGreaterThan(back[i]?.[0]?.timestamp ?? Number.MAX_VALUE);
    }
    expect(back.map((p) => p.length)).toEqual([1, 2, 1, 3]);

    // Forwards from before the oldest, by `previous` (`since_time` of the first message).
    const forward = await walk(`/api/v1/messages/?wa_id=${waId}&limit=2&since_time=${t - 11}`, 'previous');
    expect(
      forward
        .reverse()
        .flat()
        .map((m) => m.id),
    ).toEqual(all.map((m) => m.id));

    // A message's own cursors: older than it, newer than it.
    const middle = all.find((m) => m.timestamp === t - 9);
    const older = await json<Page>(
      await inbox.api('GET', `/api/v1/messages/?wa_id=${waId}&before_time=${middle?.before_time}`, {
        token: admin,
      }),
    );
    expect(older.results.map((m) => m.timestamp)).toEqual([t - 10, t - 10, t - 10]);
    expect(older.next).toBeNull();
    const newer = await json<Page>(
      await inbox.api('GET', `/api/v1/messages/?wa_id=${waId}&since_time=${middle?.since_time}`, {
        token: admin,
      }),
    );
    expect(newer.results.map((m) => m.timestamp)).toEqual([t - 7, t - 8, t - 8]);
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
