import { createHmac } from 'node:crypto';
import { connectNats, type NatsConnection } from '@switchboard/kit';
import {
  type ErrorCode,
  ensureConfigurator,
  errorCatalogue,
  instanceId,
  ServiceError,
} from '@switchboard/proto';
import { createBus } from '@switchboard/proto/bus';
import { testNatsUrl, waitFor } from '@switchboard/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, postRefusedEarly } from './support/api.ts';
import { type Inbox, startInbox } from './support/inbox.ts';

/** Reached only from inside (a bug, a failed dependency): covered by test/bus-reliability.test.ts. */
const NOT_TRIGGERABLE: Partial<Record<ErrorCode, string>> = {
  internal_error: 'a service failing on its own; test/bus-reliability.test.ts makes chats fail',
  invalid_content_length: 'Fastify refuses a wrong Content-Length; fetch always sends the right one',
  bad_request:
    'a path that is not valid UTF-8, or a Fastify 4xx without a code of its own; fetch refuses to send one',
  not_redrivable: 'a stream message that is not a webhook envelope; the gateway only publishes envelopes',
};

let inbox: Inbox;
let nc: NatsConnection;
let admin = '';
let agent = '';
let configurator = '';
let configuratorId = 0;
let adminId = 0;

beforeAll(async () => {
  inbox = await startInbox({
    fanout: true,
    env: { MAX_NUMBER_OF_SEATS: '3', INBOX_CONFIGURATOR_USERNAME: 'catalogue-configurator' },
  });
  admin = await inbox.login();
  adminId = (await json<{ id: number }>(await inbox.api('GET', '/api/v1/users/me/', { token: admin }))).id;
  nc = await connectNats(testNatsUrl(), 'catalogue-test');
  const bus = await createBus(nc, instanceId(inbox.env.INSTANCE_ID ?? ''));
  const c = await bus.request(ensureConfigurator, { username: 'catalogue-configurator' });
  configurator = c.token;
  configuratorId = c.user_id;
  const password = 'Quiet orchard under amber skies';
  const res = await inbox.api('POST', '/api/v1/users/', {
    token: admin,
    body: { username: 'catalogue-agent', password },
  });
  expect(res.status).toBe(201);
  agent = await inbox.login('catalogue-agent', password);
}, 120_000);

afterAll(async () => {
  await nc?.drain();
  await inbox?.stop();
});

/** `chat_import/` as the admin, with a valid request changed by `change`. */
function importChat(change: Record<string, unknown>): Promise<Response> {
  return inbox.api('POST', '/api/v1/chat_import/', {
    token: admin,
    body: {
      chat_text: '01/06/2024, 09:00 - +44 7700 900888: Hello\n',
      utc_offset_minutes: 60,
      device_language_code: 'en-GB',
      media_files: [],
      ...change,
    },
  });
}

/** One request per code; the last one stops chats, so it runs last. */
const TRIGGERS: Array<[ErrorCode, () => Promise<Response>]> = [
  ['validation_error', () => inbox.api('POST', '/api/v1/users/', { token: admin, body: {} })],
  [
    'invalid_json',
    () =>
      fetch(`${inbox.url}/api/v1/auth/token/`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"username":',
      }),
  ],
  ['invalid_payload', () => inbox.networkPost('[]')],
  [
    'invalid_credentials',
    () =>
      inbox.api('POST', '/api/v1/auth/token/', {
        body: { username: 'catalogue-agent', password: 'wrong one' },
      }),
  ],
  ['not_authenticated', () => inbox.api('GET', '/api/v1/users/me/')],
  ['invalid_token', () => inbox.api('GET', '/api/v1/users/me/', { token: 'f'.repeat(40) })],
  [
    'invalid_refresh_token',
    () =>
      inbox.api('POST', '/api/v1/auth/refresh_token/convert/', { body: { refresh_token: 'x'.repeat(40) } }),
  ],
  [
    'invalid_signature',
    () =>
      inbox.api('POST', '/api/v1/waba/webhook/', {
        body: { object: 'whatsapp_business_account', entry: [] },
      }),
  ],
  ['permission_denied', () => inbox.api('GET', '/api/v1/users/', { token: agent })],
  ['configurator_not_allowed', () => inbox.api('GET', '/api/v1/chats/', { token: configurator })],
  [
    'configurator_protected',
    () =>
      inbox.api('PATCH', `/api/v1/users/${configuratorId}/`, {
        token: admin,
        body: { first_name: 'Renamed' },
      }),
  ],
  [
    'cannot_change_own_rights',
    () =>
      inbox.api('PATCH', `/api/v1/users/${adminId}/`, {
        token: admin,
        body: { permissions: { can_use_tags: false } },
      }),
  ],
  [
    'role_change_not_allowed',
    () =>
      inbox.api('PATCH', `/api/v1/users/${adminId}/`, {
        token: configurator,
        body: { profile: { role: 'user' } },
      }),
  ],
  [
    'verify_token_mismatch',
    () => inbox.api('GET', '/api/v1/waba/webhook/?hub.mode=subscribe&hub.verify_token=nope&hub.challenge=1'),
  ],
  ['not_found', () => inbox.api('GET', '/api/v1/users/999999/', { token: admin })],
  [
    'seat_limit_reached',
    async () => {
      // Three seats: the admin and the agent hold two; the third user fits, the fourth does not.
      let last = new Response(null, { status: 599 });
      for (const n of [1, 2]) {
        last = await inbox.api('POST', '/api/v1/users/', {
          token: admin,
          body: { username: `seat-${n}`, password: `Seat holder number ${n} waits` },
        });
      }
      return last;
    },
  ],
  ['cannot_delete_self', () => inbox.api('DELETE', `/api/v1/users/${adminId}/`, { token: admin })],
  [
    'username_taken',
    async () => {
      // Internal only (the provisioner's request); the bus answers it as a ServiceError.
      const bus = await createBus(nc, instanceId(inbox.env.INSTANCE_ID ?? ''));
      const err = await bus
        .request(ensureConfigurator, { username: 'catalogue-agent' })
        .catch((e: unknown) => e);
      return new Response(JSON.stringify({ code: (err as ServiceError).code }), {
        status: err instanceof ServiceError ? err.status : 599,
      });
    },
  ],
  [
    'webhook_disabled',
    async () => {
      const hook = await json<{ id: string }>(
        await inbox.api('POST', '/api/v1/webhooks/waba/', {
          token: admin,
          body: { url: 'http://127.0.0.1:9/never', enabled: false },
        }),
      );
      return inbox.api('POST', `/api/v1/webhooks/waba/${hook.id}/replay/`, {
        token: admin,
        body: { since: 0 },
      });
    },
  ],
  [
    'already_tagged',
    async () => {
      await inbox.customerSays('4915550007001', { type: 'text', text: { body: 'tag me' } });
      await waitFor(
        async () => (await inbox.api('GET', '/api/v1/chats/4915550007001/', { token: admin })).status === 200,
        15_000,
        'chat stored',
      );
      const tag = await json<{ id: number }>(
        await inbox.api('POST', '/api/v1/tags/', {
          token: admin,
          body: { name: 'catalogue', web_inbox_color: '#00ff00' },
        }),
      );
      const tagging = () =>
        inbox.api('POST', '/api/v1/chat_tagging/', {
          token: admin,
          body: { chat: '4915550007001', tag: tag.id },
        });
      expect((await tagging()).status).toBe(201);
      return tagging();
    },
  ],
  [
    'tag_name_taken',
    () =>
      inbox.api('POST', '/api/v1/tags/', {
        token: admin,
        body: { name: 'Catalogue', web_inbox_color: '#0000ff' },
      }),
  ],
  // The network blocks only customers who wrote in the last 24 hours.
  ['block_refused', () => inbox.api('POST', '/api/v1/contacts/4915550007002/block/', { token: admin })],
  ['not_a_chat_export', () => importChat({ chat_text: 'Dear shop, this is our chat.' })],
  [
    'mixed_chat_formats',
    () =>
      importChat({
        chat_text: [
          '10/06/2024, 09:00 - +44 7700 900888: a',
          '11/06/2024, 09:01 - +44 7700 900888: b',
          '[12/06/2024, 10:00:00] +44 7700 900888: c',
          '[13/06/2024, 10:01:00] +44 7700 900888: d',
        ].join('\n'),
      }),
  ],
  [
    'ambiguous_date_order',
    () =>
      importChat({
        chat_text: '03/04/2024, 09:00 - +44 7700 900888: a\n05/06/2024, 09:00 - +44 7700 900888: b\n',
        device_language_code: 'en',
      }),
  ],
  [
    'too_many_chat_participants',
    () =>
      importChat({
        chat_text:
          '01/06/2024, 09:00 - +44 7700 900888: a\n01/06/2024, 09:01 - +44 7700 900999: b\n01/06/2024, 09:02 - Shop: c\n',
      }),
  ],
  ['chat_customer_unknown', () => importChat({ chat_text: '01/06/2024, 09:00 - Jane: Hello\n' })],
  [
    'invalid_base64',
    () =>
      importChat({
        media_files: [{ b64_content: 'not base64!', mime_type: 'image/jpeg', file_name: 'a.jpg' }],
      }),
  ],
  [
    'payload_too_large',
    () => {
      // Refused by its Content-Length before the body is read: signed like the network's.
      const body = `{"pad":"${'x'.repeat(3_200_000)}"}`;
      const signature = createHmac('sha256', inbox.env.WABA_WEBHOOK_SECRET ?? '')
        .update(body)
        .digest('hex');
      return postRefusedEarly(
        `${inbox.url}/api/v1/waba/webhook/`,
        { 'content-type': 'application/json', 'x-hub-signature-256': `sha256=${signature}` },
        body,
      );
    },
  ],
  ['uri_too_long', () => inbox.api('GET', `/api/v1/messages/${'a'.repeat(200)}/`, { token: admin })],
  ['unsupported_media_type', () => inbox.networkPost('{}', 'application/xml')],
  [
    'range_not_satisfiable',
    async () => {
      const upload = await fetch(`${inbox.url}/api/v1/media/?filename=note.txt`, {
        method: 'POST',
        headers: { authorization: `Token ${admin}`, 'content-type': 'text/plain' },
        body: 'a short note',
      });
      const { file } = await json<{ file: string }>(upload);
      return fetch(file, { headers: { range: 'bytes=100-' } });
    },
  ],
  [
    'idempotency_key_reused',
    async () => {
      const key = { 'idempotency-key': 'catalogue-key-1' };
      await inbox.customerSays('4915550009999', { type: 'text', text: { body: 'hello' } });
      await waitFor(
        async () => (await inbox.api('GET', '/api/v1/chats/4915550009999/', { token: admin })).status === 200,
        15_000,
        'chat stored',
      );
      const send = (body: string) =>
        inbox.api('POST', '/api/v1/messages/', {
          token: admin,
          headers: key,
          body: { wa_id: '4915550009999', type: 'text', text: { body } },
        });
      expect((await send('first')).status).toBe(202);
      return send('second, different');
    },
  ],
  [
    'too_many_attempts',
    async () => {
      let last = new Response(null, { status: 599 });
      for (let i = 0; i < 7; i++) {
        last = await inbox.api('POST', '/api/v1/auth/token/', {
          body: { username: 'catalogue-locked', password: 'not the password' },
        });
      }
      return last;
    },
  ],
  [
    'window_closed',
    () =>
      inbox.api('POST', '/api/v1/messages/', {
        token: admin,
        body: { wa_id: '4915550008888', type: 'text', text: { body: 'nobody wrote first' } },
      }),
  ],
  [
    'service_unavailable',
    async () => {
      await inbox.chats.stop();
      return inbox.api('GET', '/api/v1/chats/', { token: admin });
    },
  ],
];

describe('error catalogue', () => {
  it('has a trigger or a stated reason for every code, and nothing else', () => {
    const covered = [...TRIGGERS.map(([code]) => code), ...Object.keys(NOT_TRIGGERABLE)].sort();
    expect(covered).toEqual(Object.keys(errorCatalogue).sort());
  });

  it('each code is answered with its catalogue status', async () => {
    const wrong: string[] = [];
    for (const [code, trigger] of TRIGGERS) {
      const res = await trigger();
      const body = await res.text();
      const got = (() => {
        try {
          return (JSON.parse(body) as { code?: string }).code;
        } catch {
          return undefined;
        }
      })();
      if (got !== code || res.status !== errorCatalogue[code].status) {
        wrong.push(`${code}: answered ${res.status} ${got ?? body.slice(0, 120)}`);
      }
    }
    expect(wrong).toEqual([]);
  }, 120_000);
});
