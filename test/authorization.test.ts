/**
 * The authorization matrix: every route of the inbox API × every kind of caller, with the
 * answer each must get, and what each role's per-user webhook receives. A route added to the
 * API without a row here fails the first test.
 */

import { jetstreamManager } from '@nats-io/jetstream';
import { connectNats, type NatsConnection } from '@switchboard/kit';
import { ensureConfigurator, instanceId, streamName } from '@switchboard/proto';
import { type Bus, createBus } from '@switchboard/proto/bus';
import { type Receiver, startReceiver, testNatsUrl, waitFor } from '@switchboard/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json } from './support/api.ts';
import { type Inbox, startInbox } from './support/inbox.ts';

type Role =
  | 'anonymous'
  | 'deactivated'
  | 'admin'
  | 'configurator'
  | 'agent_all'
  | 'agent_assigned'
  | 'agent_read_only'
  | 'agent_none'
  | 'agent_no_tags';

const ROLES: Role[] = [
  'anonymous',
  'deactivated',
  'agent_none',
  'agent_read_only',
  'agent_assigned',
  'agent_no_tags',
  'agent_all',
  'configurator',
  'admin',
];

type ChatAccess = 'all' | 'assigned' | 'none';
const AGENTS: Record<
  Exclude<Role, 'anonymous' | 'admin' | 'configurator'>,
  [ChatAccess, ChatAccess, boolean]
> = {
  // can_read_chats, can_write_to_chats, can_use_tags
  deactivated: ['all', 'all', true],
  agent_all: ['all', 'all', true],
  agent_assigned: ['assigned', 'assigned', true],
  agent_read_only: ['all', 'none', true],
  agent_none: ['none', 'none', true],
  agent_no_tags: ['all', 'all', false],
};

/** `ok`: let through (any answer but 401/403 and never 5xx); a number: exactly that status. */
type Expect = 'ok' | 400 | 401 | 403 | 404;
type Matrix = Record<Role, Expect>;

const signedIn = { anonymous: 401, deactivated: 401 } as const;
const everyone: Matrix = {
  ...signedIn,
  admin: 'ok',
  configurator: 'ok',
  agent_all: 'ok',
  agent_assigned: 'ok',
  agent_read_only: 'ok',
  agent_none: 'ok',
  agent_no_tags: 'ok',
};
const publicRoute: Matrix = { ...everyone, anonymous: 'ok', deactivated: 'ok' };
const adminsOnly: Matrix = {
  ...signedIn,
  admin: 'ok',
  configurator: 'ok',
  agent_all: 403,
  agent_assigned: 403,
  agent_read_only: 403,
  agent_none: 403,
  agent_no_tags: 403,
};
/** Lists and reads of chats: filtered for `assigned`, refused for `none` and the configurator. */
const readChats: Matrix = { ...everyone, configurator: 403, agent_none: 403 };
/** Reading the unassigned chat B: an `assigned` agent is told it does not exist. */
const readChatB: Matrix = { ...readChats, agent_assigned: 404 };
const writeChatB: Matrix = { ...readChatB, agent_read_only: 403 };
/** Tags: anyone who works in the inbox with `can_use_tags`. */
const useTags: Matrix = { ...everyone, configurator: 403, agent_no_tags: 403 };
/** Taggings and their history: tags and reading chats. */
const tagChats: Matrix = { ...readChats, agent_no_tags: 403 };
const tagChatB: Matrix = { ...tagChats, agent_assigned: 404 };
/** A message of chat B names, for an agent who may not read that chat, no message: 400 on the field. */
const tagMessageInChatB: Matrix = { ...tagChats, agent_assigned: 400 };
/** Saved responses: every inbox user; the configurator does not work in the inbox. */
const inboxUsers: Matrix = { ...everyone, configurator: 403 };
/** Importing into chat B: a write to it, refused outright (403) when the caller may not write it. */
const importChatB: Matrix = { ...readChats, agent_read_only: 403, agent_assigned: 403 };
/** Another user's webhook: an agent is told it does not exist. */
const othersWebhook: Matrix = {
  ...adminsOnly,
  agent_all: 404,
  agent_assigned: 404,
  agent_read_only: 404,
  agent_none: 404,
  agent_no_tags: 404,
};

interface Row {
  method: string;
  /** As in the OpenAPI document. */
  path: string;
  url: () => string;
  body?: () => unknown;
  expect: Matrix;
}

let inbox: Inbox;
let nc: NatsConnection;
let bus: Bus;
const passwords = new Map<Role, string>();
const tokens = new Map<Role, string>();
const userIds = new Map<Role, number>();
const receivers = new Map<Role, Receiver>();
const webhookIds = new Map<Role, string>();
const CHAT_A = '4915550000001'; // assigned to agent_assigned
const CHAT_B = '4915550000002'; // assigned to nobody
let sentWamid = '';
let tagId = 0;

async function call(role: Role, method: string, url: string, body?: unknown): Promise<Response> {
  const token = tokens.get(role);
  return inbox.api(method, url, { ...(token && { token }), ...(body !== undefined && { body }) });
}

async function adminCall<T>(method: string, url: string, body?: unknown): Promise<T> {
  const res = await call('admin', method, url, body);
  if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`);
  return res.status === 204 ? (undefined as T) : json<T>(res);
}

const id = (role: Role) => String(userIds.get(role));
const hook = (role: Role) => webhookIds.get(role) ?? '';

const ROWS: Row[] = [
  { method: 'GET', path: '/api/v1/status/health/', url: () => '/api/v1/status/health/', expect: publicRoute },
  {
    method: 'POST',
    path: '/api/v1/auth/token/',
    url: () => '/api/v1/auth/token/',
    body: () => ({}),
    expect: publicRoute,
  },
  {
    method: 'POST',
    path: '/api/v1/auth/refresh_token/convert/',
    url: () => '/api/v1/auth/refresh_token/convert/',
    body: () => ({ refresh_token: 'x'.repeat(40) }),
    // A wrong refresh token is 401 for everyone: it is the credential here, not the caller's token.
    expect: allRoles(401),
  },
  {
    method: 'POST',
    path: '/api/v1/auth/id_token/convert/',
    url: () => '/api/v1/auth/id_token/convert/',
    body: () => ({ id_token: 'x'.repeat(40) }),
    expect: allRoles(401),
  },
  {
    method: 'POST',
    path: '/api/v1/auth/passwordless/',
    url: () => '/api/v1/auth/passwordless/',
    body: () => ({ email: 'nobody@example.com' }),
    expect: publicRoute,
  },
  {
    method: 'GET',
    path: '/api/v1/waba/webhook/',
    url: () => '/api/v1/waba/webhook/?hub.mode=subscribe&hub.verify_token=wrong&hub.challenge=1',
    expect: allRoles(403),
  },
  {
    method: 'POST',
    path: '/api/v1/waba/webhook/',
    url: () => '/api/v1/waba/webhook/',
    body: () => ({ object: 'whatsapp_business_account', entry: [] }),
    // Unsigned: the network's signature is the only credential this path knows.
    expect: allRoles(401),
  },
  { method: 'GET', path: '/api/v1/users/me/', url: () => '/api/v1/users/me/', expect: everyone },
  {
    method: 'PATCH',
    path: '/api/v1/users/me/availability/',
    url: () => '/api/v1/users/me/availability/',
    body: () => ({ is_available: true }),
    expect: everyone,
  },
  { method: 'GET', path: '/api/v1/users/', url: () => '/api/v1/users/', expect: adminsOnly },
  {
    method: 'POST',
    path: '/api/v1/users/',
    url: () => '/api/v1/users/',
    body: () => ({}),
    expect: adminsOnly,
  },
  {
    method: 'GET',
    path: '/api/v1/users/{id}/',
    url: () => `/api/v1/users/${id('agent_all')}/`,
    expect: adminsOnly,
  },
  {
    method: 'PATCH',
    path: '/api/v1/users/{id}/',
    url: () => `/api/v1/users/${id('agent_all')}/`,
    body: () => ({ first_name: 'Alex' }),
    expect: adminsOnly,
  },
  { method: 'DELETE', path: '/api/v1/users/{id}/', url: () => '/api/v1/users/999999/', expect: adminsOnly },
  {
    method: 'POST',
    path: '/api/v1/users/{id}/refresh_token/',
    url: () => `/api/v1/users/${id('agent_all')}/refresh_token/`,
    expect: adminsOnly,
  },
  { method: 'GET', path: '/api/v1/groups/', url: () => '/api/v1/groups/', expect: everyone },
  {
    method: 'POST',
    path: '/api/v1/groups/',
    url: () => '/api/v1/groups/',
    body: () => ({}),
    expect: adminsOnly,
  },
  { method: 'GET', path: '/api/v1/groups/{id}/', url: () => '/api/v1/groups/999999/', expect: everyone },
  {
    method: 'PATCH',
    path: '/api/v1/groups/{id}/',
    url: () => '/api/v1/groups/999999/',
    body: () => ({ name: 'Nobody' }),
    expect: adminsOnly,
  },
  { method: 'DELETE', path: '/api/v1/groups/{id}/', url: () => '/api/v1/groups/999999/', expect: adminsOnly },
  { method: 'GET', path: '/api/v1/audit_logs/', url: () => '/api/v1/audit_logs/', expect: adminsOnly },
  {
    method: 'GET',
    path: '/api/v1/waba/dead_letters/',
    url: () => '/api/v1/waba/dead_letters/',
    expect: adminsOnly,
  },
  {
    method: 'POST',
    path: '/api/v1/waba/dead_letters/{id}/redrive/',
    url: () => '/api/v1/waba/dead_letters/999999/redrive/',
    expect: adminsOnly,
  },
  { method: 'GET', path: '/api/v1/chats/', url: () => '/api/v1/chats/', expect: readChats },
  { method: 'GET', path: '/api/v1/chats/{wa_id}/', url: () => `/api/v1/chats/${CHAT_B}/`, expect: readChatB },
  {
    method: 'PATCH',
    path: '/api/v1/chats/{wa_id}/',
    url: () => `/api/v1/chats/${CHAT_B}/`,
    body: () => ({ resolved: false }),
    expect: writeChatB,
  },
  {
    method: 'PATCH',
    path: '/api/v1/chat_assignment/{wa_id}/',
    url: () => `/api/v1/chat_assignment/${CHAT_B}/`,
    body: () => ({ assigned_to_user: null }),
    expect: writeChatB,
  },
  {
    method: 'GET',
    path: '/api/v1/messages/',
    url: () => `/api/v1/messages/?wa_id=${CHAT_B}`,
    expect: readChatB,
  },
  {
    method: 'POST',
    path: '/api/v1/messages/',
    url: () => '/api/v1/messages/',
    body: () => ({ wa_id: CHAT_B, type: 'text', text: { body: 'Matrix check' } }),
    expect: writeChatB,
  },
  {
    method: 'GET',
    path: '/api/v1/messages/{id}/',
    url: () => `/api/v1/messages/${sentWamid}/`,
    expect: readChatB,
  },
  {
    method: 'POST',
    path: '/api/v1/chat_import/',
    url: () => '/api/v1/chat_import/',
    body: () => ({
      chat_text: '14/03/2024, 10:00 - +49 1555 0000002: Imported hello\n',
      utc_offset_minutes: 60,
      device_language_code: 'de-DE',
      media_files: [],
    }),
    expect: importChatB,
  },
  {
    method: 'POST',
    path: '/api/v1/mark_as_received/',
    url: () => '/api/v1/mark_as_received/',
    body: () => ({ customer_wa_id: CHAT_B, timestamp: Math.floor(Date.now() / 1000) }),
    expect: readChatB,
  },
  { method: 'GET', path: '/api/v1/persons/', url: () => '/api/v1/persons/', expect: readChats },
  { method: 'GET', path: '/api/v1/templates/', url: () => '/api/v1/templates/', expect: everyone },
  { method: 'GET', path: '/api/v1/contacts/', url: () => '/api/v1/contacts/', expect: readChats },
  {
    method: 'GET',
    path: '/api/v1/contacts/{wa_id}/',
    url: () => `/api/v1/contacts/${CHAT_B}/`,
    expect: readChatB,
  },
  {
    method: 'POST',
    path: '/api/v1/contacts/{wa_id}/verify/',
    url: () => `/api/v1/contacts/${CHAT_B}/verify/`,
    expect: writeChatB,
  },
  {
    method: 'POST',
    path: '/api/v1/contacts/{wa_id}/block/',
    url: () => `/api/v1/contacts/${CHAT_B}/block/`,
    expect: writeChatB,
  },
  {
    method: 'POST',
    path: '/api/v1/contacts/{wa_id}/report/',
    url: () => `/api/v1/contacts/${CHAT_B}/report/`,
    body: () => ({ reason: 'Matrix check' }),
    expect: writeChatB,
  },
  // After block and report: the admin, last, unblocks B for the webhook tests below.
  {
    method: 'DELETE',
    path: '/api/v1/contacts/{wa_id}/block/',
    url: () => `/api/v1/contacts/${CHAT_B}/block/`,
    expect: writeChatB,
  },
  {
    method: 'GET',
    path: '/api/v1/contact_providers/',
    url: () => '/api/v1/contact_providers/',
    expect: adminsOnly,
  },
  {
    method: 'POST',
    path: '/api/v1/contact_providers/',
    url: () => '/api/v1/contact_providers/',
    body: () => ({}),
    expect: adminsOnly,
  },
  {
    method: 'GET',
    path: '/api/v1/contact_providers/{id}/',
    url: () => '/api/v1/contact_providers/999999/',
    expect: adminsOnly,
  },
  {
    method: 'PATCH',
    path: '/api/v1/contact_providers/{id}/',
    url: () => '/api/v1/contact_providers/999999/',
    body: () => ({ enabled: false }),
    expect: adminsOnly,
  },
  {
    method: 'DELETE',
    path: '/api/v1/contact_providers/{id}/',
    url: () => '/api/v1/contact_providers/999999/',
    expect: adminsOnly,
  },
  { method: 'GET', path: '/api/v1/tags/', url: () => '/api/v1/tags/', expect: useTags },
  { method: 'POST', path: '/api/v1/tags/', url: () => '/api/v1/tags/', body: () => ({}), expect: useTags },
  { method: 'GET', path: '/api/v1/tags/{id}/', url: () => `/api/v1/tags/${tagId}/`, expect: useTags },
  {
    method: 'PATCH',
    path: '/api/v1/tags/{id}/',
    url: () => `/api/v1/tags/${tagId}/`,
    body: () => ({ web_inbox_color: '#123456' }),
    expect: useTags,
  },
  { method: 'DELETE', path: '/api/v1/tags/{id}/', url: () => '/api/v1/tags/999999/', expect: useTags },
  { method: 'GET', path: '/api/v1/chat_tagging/', url: () => '/api/v1/chat_tagging/', expect: tagChats },
  {
    method: 'POST',
    path: '/api/v1/chat_tagging/',
    url: () => '/api/v1/chat_tagging/',
    body: () => ({ chat: CHAT_B, tag: tagId }),
    expect: tagChatB,
  },
  {
    method: 'DELETE',
    path: '/api/v1/chat_tagging/{id}/',
    url: () => '/api/v1/chat_tagging/999999/',
    expect: tagChats,
  },
  {
    method: 'GET',
    path: '/api/v1/message_tagging/',
    url: () => '/api/v1/message_tagging/',
    expect: tagChats,
  },
  {
    method: 'POST',
    path: '/api/v1/message_tagging/',
    url: () => '/api/v1/message_tagging/',
    // The message is in chat B, which agent_assigned may not read.
    body: () => ({ message: sentWamid, tag: tagId }),
    expect: tagMessageInChatB,
  },
  {
    method: 'DELETE',
    path: '/api/v1/message_tagging/{id}/',
    url: () => '/api/v1/message_tagging/999999/',
    expect: tagChats,
  },
  {
    method: 'GET',
    path: '/api/v1/chat_tagging_events/',
    url: () => '/api/v1/chat_tagging_events/',
    expect: tagChats,
  },
  {
    method: 'GET',
    path: '/api/v1/message_tagging_events/',
    url: () => '/api/v1/message_tagging_events/',
    expect: tagChats,
  },
  {
    method: 'GET',
    path: '/api/v1/saved_responses/',
    url: () => '/api/v1/saved_responses/',
    expect: inboxUsers,
  },
  {
    method: 'POST',
    path: '/api/v1/saved_responses/',
    url: () => '/api/v1/saved_responses/',
    body: () => ({ name: 'matrix', text: 'Matrix check' }),
    expect: inboxUsers,
  },
  {
    method: 'GET',
    path: '/api/v1/saved_responses/{id}/',
    url: () => '/api/v1/saved_responses/999999/',
    expect: inboxUsers,
  },
  {
    method: 'PATCH',
    path: '/api/v1/saved_responses/{id}/',
    url: () => '/api/v1/saved_responses/999999/',
    body: () => ({ text: 'x' }),
    expect: inboxUsers,
  },
  {
    method: 'DELETE',
    path: '/api/v1/saved_responses/{id}/',
    url: () => '/api/v1/saved_responses/999999/',
    expect: inboxUsers,
  },
  { method: 'GET', path: '/api/v1/push_tokens/', url: () => '/api/v1/push_tokens/', expect: everyone },
  {
    method: 'POST',
    path: '/api/v1/push_tokens/',
    url: () => '/api/v1/push_tokens/',
    body: () => ({ token: 'matrix-device', platform: 'fcm' }),
    expect: everyone,
  },
  {
    method: 'PATCH',
    path: '/api/v1/push_tokens/{id}/',
    url: () => '/api/v1/push_tokens/999999/',
    body: () => ({ enabled: false }),
    expect: everyone,
  },
  {
    method: 'DELETE',
    path: '/api/v1/push_tokens/{id}/',
    url: () => '/api/v1/push_tokens/999999/',
    expect: everyone,
  },
  {
    method: 'GET',
    path: '/api/v1/whatsapp_accounts/',
    url: () => '/api/v1/whatsapp_accounts/',
    expect: everyone,
  },
  // Uploading is messaging: refused to the configurator and to agents who may read no chat.
  {
    method: 'POST',
    path: '/api/v1/media/',
    url: () => '/api/v1/media/',
    body: () => ({}),
    expect: readChats,
  },
  // The id is the capability: no token, and an unknown id is a 404 for everyone.
  {
    method: 'GET',
    path: '/api/v1/media/{id}/',
    url: () => '/api/v1/media/0b5f8a2e-3c1d-4e6f-9a7b-8c9d0e1f2a3b/',
    expect: { ...publicRoute },
  },
  { method: 'GET', path: '/api/v1/webhooks/waba/', url: () => '/api/v1/webhooks/waba/', expect: everyone },
  {
    method: 'POST',
    path: '/api/v1/webhooks/waba/',
    url: () => '/api/v1/webhooks/waba/',
    body: () => ({}),
    expect: everyone,
  },
  {
    method: 'GET',
    path: '/api/v1/webhooks/waba/{id}/',
    url: () => `/api/v1/webhooks/waba/${hook('admin')}/`,
    expect: othersWebhook,
  },
  {
    method: 'PUT',
    path: '/api/v1/webhooks/waba/{id}/',
    url: () => `/api/v1/webhooks/waba/${hook('admin')}/`,
    body: () => ({ url: receivers.get('admin')?.url }),
    expect: othersWebhook,
  },
  {
    method: 'PATCH',
    path: '/api/v1/webhooks/waba/{id}/',
    url: () => `/api/v1/webhooks/waba/${hook('admin')}/`,
    body: () => ({ enabled: true }),
    expect: othersWebhook,
  },
  {
    method: 'GET',
    path: '/api/v1/webhooks/waba/{id}/test/',
    url: () => `/api/v1/webhooks/waba/${hook('admin')}/test/`,
    expect: othersWebhook,
  },
  {
    method: 'GET',
    path: '/api/v1/webhooks/waba/{id}/deliveries/',
    url: () => `/api/v1/webhooks/waba/${hook('admin')}/deliveries/`,
    expect: othersWebhook,
  },
  {
    method: 'POST',
    path: '/api/v1/webhooks/waba/{id}/replay/',
    url: () => `/api/v1/webhooks/waba/${hook('admin')}/replay/`,
    body: () => ({ since: 0 }),
    expect: othersWebhook,
  },
  {
    method: 'POST',
    path: '/api/v1/webhooks/waba/{id}/rotate_secret/',
    url: () => `/api/v1/webhooks/waba/${hook('admin')}/rotate_secret/`,
    expect: othersWebhook,
  },
  {
    method: 'DELETE',
    path: '/api/v1/webhooks/waba/{id}/',
    url: () => '/api/v1/webhooks/waba/00000000-0000-4000-8000-000000000000/',
    expect: { ...everyone },
  },
  // Last: it ends each caller's session.
  { method: 'POST', path: '/api/v1/auth/logout/', url: () => '/api/v1/auth/logout/', expect: everyone },
];

function allRoles(e: Expect): Matrix {
  return Object.fromEntries(ROLES.map((r) => [r, e])) as Matrix;
}

/** Routes only documentation and machines read: no caller-specific behaviour to check. */
const UNMATRIXED = new Set(['GET /api/v1/schema/']);

beforeAll(async () => {
  inbox = await startInbox({
    fanout: true,
    env: { MAX_NUMBER_OF_SEATS: '20', INBOX_CONFIGURATOR_USERNAME: 'partner-configurator' },
  });
  tokens.set('admin', await inbox.login());
  const me = await adminCall<{ id: number }>('GET', '/api/v1/users/me/');
  userIds.set('admin', me.id);

  nc = await connectNats(testNatsUrl(), 'authorization-test');
  bus = await createBus(nc, instanceId(inbox.env.INSTANCE_ID ?? ''));
  const configurator = await bus.request(ensureConfigurator, { username: 'partner-configurator' });
  tokens.set('configurator', configurator.token);
  userIds.set('configurator', configurator.user_id);

  for (const [role, [read, write, tags]] of Object.entries(AGENTS) as Array<
    [keyof typeof AGENTS, [ChatAccess, ChatAccess, boolean]]
  >) {
    const password = `Lighthouse keeper ${ROLES.indexOf(role)} sings at dawn`;
    const user = await adminCall<{ id: number }>('POST', '/api/v1/users/', {
      username: role,
      password,
      permissions: { can_read_chats: read, can_write_to_chats: write, can_use_tags: tags },
    });
    userIds.set(role, user.id);
    passwords.set(role, password);
    tokens.set(role, await inbox.login(role, password));
  }

  // Two customers; A is assigned to agent_assigned.
  await inbox.customerSays(CHAT_A, { type: 'text', text: { body: 'I am A' }, profile_name: 'Customer A' });
  await inbox.customerSays(CHAT_B, { type: 'text', text: { body: 'I am B' }, profile_name: 'Customer B' });
  await waitFor(
    async () => (await json<{ count: number }>(await call('admin', 'GET', '/api/v1/chats/'))).count === 2,
    15_000,
    'both chats stored',
  );
  await adminCall('PATCH', `/api/v1/chat_assignment/${CHAT_A}/`, {
    assigned_to_user: userIds.get('agent_assigned'),
  });
  const sent = await adminCall<{ id: string }>('POST', '/api/v1/messages/', {
    wa_id: CHAT_B,
    type: 'text',
    text: { body: 'Hello B' },
  });
  sentWamid = sent.id;
  tagId = (
    await adminCall<{ id: number }>('POST', '/api/v1/tags/', { name: 'matrix', web_inbox_color: '#123456' })
  ).id;

  // Each signed-in role's own webhook; the deactivated user's is made while still active.
  for (const role of ROLES) {
    if (role === 'anonymous') continue;
    const receiver = await startReceiver();
    receivers.set(role, receiver);
    const created = await json<{ id: string }>(
      await call(role, 'POST', '/api/v1/webhooks/waba/', { url: receiver.url }),
    );
    webhookIds.set(role, created.id);
  }
  await adminCall('DELETE', `/api/v1/users/${id('deactivated')}/`);
}, 120_000);

afterAll(async () => {
  await nc?.drain();
  await Promise.all([...receivers.values()].map((r) => r.close()));
  await inbox?.stop();
});

describe('authorization matrix', () => {
  it('has a row for every operation of the OpenAPI document, and no row without one', async () => {
    const doc = await json<{ paths: Record<string, Record<string, unknown>> }>(
      await inbox.api('GET', '/api/v1/schema/'),
    );
    const documented = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops)
        .filter((m) => ['get', 'post', 'put', 'patch', 'delete'].includes(m))
        .map((m) => `${m.toUpperCase()} ${path}`),
    );
    const rows = ROWS.map((r) => `${r.method} ${r.path}`);
    expect(documented.filter((op) => !rows.includes(op) && !UNMATRIXED.has(op))).toEqual([]);
    expect(rows.filter((op) => !documented.includes(op))).toEqual([]);
  });

  it('answers each caller as the matrix says', async () => {
    const wrong: string[] = [];
    for (const row of ROWS) {
      for (const role of ROLES) {
        const res = await call(role, row.method, row.url(), row.body?.());
        const want = row.expect[role];
        const ok =
          want === 'ok' ? res.status !== 401 && res.status !== 403 && res.status < 500 : res.status === want;
        if (!ok) wrong.push(`${row.method} ${row.url()} as ${role}: ${res.status}, expected ${want}`);
      }
    }
    expect(wrong).toEqual([]);
  });
});

/**
 * Every event has been decided for a webhook (delivered, skipped or failed) once its durable
 * has nothing pending: the fan-out's `fanout-wh-<webhook>` consumer on the events stream.
 */
async function settled(role: Role): Promise<boolean> {
  const jsm = await jetstreamManager(nc);
  const info = await jsm.consumers.info(
    streamName(instanceId(inbox.env.INSTANCE_ID ?? ''), 'events'),
    `fanout-wh-${hook(role)}`,
  );
  return info.num_pending === 0 && info.num_ack_pending === 0;
}

function customersIn(receiver: Receiver | undefined): Set<string> {
  const seen = new Set<string>();
  for (const r of receiver?.requests ?? []) {
    const body = JSON.parse(r.body) as {
      entry?: Array<{ changes?: Array<{ value?: { messages?: Array<{ from: string }> } }> }>;
    };
    for (const e of body.entry ?? [])
      for (const c of e.changes ?? []) for (const m of c.value?.messages ?? []) seen.add(m.from);
  }
  return seen;
}

async function customerWritesAndAllSettle(waId: string, text: string): Promise<void> {
  const { id: wamid } = await inbox.customerSays(waId, { type: 'text', text: { body: text } });
  // The admin's webhook receives everything: once it has this message, the event is out.
  await waitFor(
    async () => (receivers.get('admin')?.requests ?? []).some((r) => r.body.includes(wamid)),
    15_000,
    `admin webhook receives ${text}`,
  );
  for (const role of ROLES) {
    if (role === 'anonymous') continue;
    await waitFor(() => settled(role), 15_000, `${role} webhook settled`);
  }
}

/** The matrix ends with logout: every caller signs in again (the deactivated one cannot). */
async function signInAgain(): Promise<void> {
  tokens.set('admin', await inbox.login());
  tokens.set(
    'configurator',
    (await bus.request(ensureConfigurator, { username: 'partner-configurator' })).token,
  );
  for (const [role, password] of passwords) {
    if (role !== 'deactivated') tokens.set(role, await inbox.login(role, password));
  }
}

describe('per-user webhook delivery', () => {
  beforeAll(signInAgain);
  it('delivers to each webhook only the chats its owner may read now', async () => {
    for (const r of receivers.values()) r.reset();
    await customerWritesAndAllSettle(CHAT_A, 'A again');
    await customerWritesAndAllSettle(CHAT_B, 'B again');

    const got = Object.fromEntries(
      ROLES.filter((r) => r !== 'anonymous').map((r) => [r, [...customersIn(receivers.get(r))].sort()]),
    );
    expect(got).toEqual({
      admin: [CHAT_A, CHAT_B],
      configurator: [CHAT_A, CHAT_B],
      agent_all: [CHAT_A, CHAT_B],
      agent_no_tags: [CHAT_A, CHAT_B],
      agent_read_only: [CHAT_A, CHAT_B],
      agent_assigned: [CHAT_A],
      agent_none: [],
      deactivated: [],
    });
  });

  it('applies changed permissions, assignments and reactivation to the next event', async () => {
    await adminCall('PATCH', `/api/v1/users/${id('agent_none')}/`, {
      permissions: { can_read_chats: 'all' },
    });
    await adminCall('PATCH', `/api/v1/users/${id('deactivated')}/`, { is_active: true });
    tokens.set('deactivated', await inbox.login('deactivated', passwords.get('deactivated')));
    await adminCall('PATCH', `/api/v1/chat_assignment/${CHAT_A}/`, { assigned_to_user: null });
    await adminCall('PATCH', `/api/v1/chat_assignment/${CHAT_B}/`, {
      assigned_to_user: userIds.get('agent_assigned'),
    });
    await adminCall('PATCH', `/api/v1/users/${id('agent_all')}/`, {
      permissions: { can_read_chats: 'none' },
    });
    for (const r of receivers.values()) r.reset();

    await customerWritesAndAllSettle(CHAT_A, 'A third');
    await customerWritesAndAllSettle(CHAT_B, 'B third');
    const got = (role: Role) => [...customersIn(receivers.get(role))].sort();
    expect(got('agent_none')).toEqual([CHAT_A, CHAT_B]);
    expect(got('deactivated')).toEqual([CHAT_A, CHAT_B]);
    expect(got('agent_assigned')).toEqual([CHAT_B]);
    expect(got('agent_all')).toEqual([]);
  });
});

describe('nobody raises their own rights', () => {
  it('the configurator cannot make itself admin, nor change anyone’s role', async () => {
    const self = await call('configurator', 'PATCH', `/api/v1/users/${id('configurator')}/`, {
      profile: { role: 'admin' },
    });
    expect(self.status).toBe(403);
    expect(await json<{ code: string }>(self)).toMatchObject({ code: 'cannot_change_own_rights' });
    const other = await call('configurator', 'PATCH', `/api/v1/users/${id('agent_read_only')}/`, {
      profile: { role: 'admin' },
    });
    expect(other.status).toBe(403);
    expect(await json<{ code: string }>(other)).toMatchObject({ code: 'role_change_not_allowed' });
    // Nor give itself a password to sign in with, or a name provisioning would not find.
    for (const body of [{ password: 'A long enough passphrase 7' }, { username: 'someone-else' }]) {
      const own = await call('configurator', 'PATCH', `/api/v1/users/${id('configurator')}/`, body);
      expect(own.status).toBe(403);
      expect(await json<{ code: string }>(own)).toMatchObject({ code: 'configurator_protected' });
    }
    // Still not allowed to message after trying.
    const send = await call('configurator', 'POST', '/api/v1/messages/', {
      wa_id: CHAT_B,
      type: 'text',
      text: { body: 'should not go' },
    });
    expect(send.status).toBe(403);
  });

  it('an admin cannot change their own role or permissions, but may change another’s', async () => {
    for (const body of [
      { profile: { role: 'user' } },
      { permissions: { can_read_chats: 'none' } },
      { is_active: false },
      { groups: [] },
      { assigned_wa_ids: [CHAT_A] },
    ]) {
      const res = await call('admin', 'PATCH', `/api/v1/users/${id('admin')}/`, body);
      expect(res.status, JSON.stringify(body)).toBe(403);
    }
    // Own name is not a right.
    expect(
      (await call('admin', 'PATCH', `/api/v1/users/${id('admin')}/`, { first_name: 'Ada' })).status,
    ).toBe(200);
    const promoted = await call('admin', 'PATCH', `/api/v1/users/${id('agent_read_only')}/`, {
      profile: { role: 'admin' },
    });
    expect(promoted.status).toBe(200);
  });

  it('nobody is given the configurator role through users/', async () => {
    const created = await call('admin', 'POST', '/api/v1/users/', {
      username: 'would-be-configurator',
      profile: { role: 'configurator', is_available: true },
    });
    expect(created.status).toBe(400);
    const changed = await call('admin', 'PATCH', `/api/v1/users/${id('agent_no_tags')}/`, {
      profile: { role: 'configurator' },
    });
    expect(changed.status).toBe(400);
    const taken = await call('admin', 'PATCH', `/api/v1/users/${id('configurator')}/`, {
      profile: { role: 'admin' },
    });
    expect(taken.status).toBe(403);
  });
});

describe('read paths filter by what the caller may read', () => {
  it('persons/ lists only customers of chats the caller may read', async () => {
    await adminCall('PATCH', `/api/v1/chat_assignment/${CHAT_A}/`, {
      assigned_to_user: userIds.get('agent_assigned'),
    });
    await adminCall('PATCH', `/api/v1/chat_assignment/${CHAT_B}/`, { assigned_to_user: null });
    const persons = async (role: Role) => {
      const res = await call(role, 'GET', '/api/v1/persons/?search=49155500');
      return res.status === 200
        ? (await json<{ results: Array<{ wa_id: string }> }>(res)).results.map((p) => p.wa_id).sort()
        : res.status;
    };
    expect(await persons('admin')).toEqual([CHAT_A, CHAT_B]);
    expect(await persons('agent_assigned')).toEqual([CHAT_A]);
    expect(await persons('agent_all')).toBe(403); // its read access was set to none above
    expect(await persons('configurator')).toBe(403);
    expect(await persons('anonymous')).toBe(401);
  });
});
