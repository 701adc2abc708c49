import { waitFor } from '@switchboard/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { mediaFixtures } from '../src/domain/fixtures/media.ts';
import {
  isNetworkError,
  type MessageStatus,
  NetworkErrorCode,
  OUTBOUND_MESSAGE_TYPES,
  type OutboundMessageInput,
} from '../src/domain/wire.ts';
import {
  call,
  clientFor,
  customerSays,
  expectedSignature,
  type FileServer,
  networkFailureOf,
  newCustomer,
  sandboxRig,
  seedOf,
  startFileServer,
} from './helpers.ts';

let retries = 0;
const rig = sandboxRig({ client: { onRetry: () => (retries += 1) } });
let files: FileServer;

beforeAll(async () => {
  files = await startFileServer({
    '/photo.png': { type: mediaFixtures.image.mimeType, data: mediaFixtures.image.data },
    '/clip.mp4': { type: 'video/mp4', data: mediaFixtures.video.data },
    '/sticker.webp': { type: 'image/webp', data: mediaFixtures.sticker.data },
    '/page.html': { type: 'text/html', data: Buffer.from('<html></html>') },
  });
});

afterAll(async () => files?.close());

async function statusesOf(wamid: string, until: (s: MessageStatus[]) => boolean): Promise<MessageStatus[]> {
  await waitFor(async () => until(rig.receiver.statuses(wamid)), 5_000, `statuses of ${wamid}`);
  return rig.receiver.statuses(wamid);
}

const reached = (status: string) => (s: MessageStatus[]) => s.some((x) => x.status === status);

describe('sending every outbound type', () => {
  it('accepts one message of each type and plays out sent, delivered and read', async () => {
    const waId = newCustomer();
    const inbound = await customerSays(rig.sb, waId, { type: 'text', text: { body: 'hi, any news?' } });
    const upload = (kind: 'audio' | 'document' | 'image') =>
      rig.client.uploadMedia({
        data: mediaFixtures[kind].data,
        mimeType: mediaFixtures[kind].mimeType,
        filename: mediaFixtures[kind].filename,
      });
    const [audioId, documentId, imageId] = await Promise.all([
      upload('audio'),
      upload('document'),
      upload('image'),
    ]);

    const messages: OutboundMessageInput[] = [
      { to: waId, type: 'text', text: { body: 'Your order shipped.', preview_url: false } },
      { to: waId, type: 'image', image: { link: `${files.url}/photo.png`, caption: 'your parcel' } },
      { to: waId, type: 'audio', audio: { id: audioId.id } },
      { to: waId, type: 'video', video: { link: `${files.url}/clip.mp4` } },
      {
        to: waId,
        type: 'document',
        document: { id: documentId.id, filename: 'invoice.pdf', caption: 'invoice' },
      },
      { to: waId, type: 'sticker', sticker: { link: `${files.url}/sticker.webp` } },
      {
        to: waId,
        type: 'location',
        location: { latitude: 38.7223, longitude: -9.1393, name: 'Store', address: 'Lisbon' },
      },
      {
        to: waId,
        type: 'contacts',
        contacts: [
          { name: { formatted_name: 'Support Desk' }, phones: [{ phone: '+351210000000', type: 'WORK' }] },
        ],
      },
      {
        to: waId,
        type: 'interactive',
        interactive: {
          type: 'button',
          header: { type: 'image', image: { id: imageId.id } },
          body: { text: 'Was this helpful?' },
          action: {
            buttons: [
              { type: 'reply', reply: { id: 'yes', title: 'Yes' } },
              { type: 'reply', reply: { id: 'no', title: 'No' } },
            ],
          },
        },
      },
      { to: waId, type: 'reaction', reaction: { message_id: inbound, emoji: '\u{1F44D}' } },
      {
        to: waId,
        type: 'template',
        template: {
          name: 'order_update',
          language: { code: 'en' },
          components: [
            {
              type: 'body',
              parameters: [
                { type: 'text', text: 'Ana' },
                { type: 'text', text: '#4711' },
              ],
            },
          ],
        },
      },
    ];
    expect(messages.map((m) => m.type)).toEqual([...OUTBOUND_MESSAGE_TYPES]);

    const wamids: string[] = [];
    for (const m of messages) {
      const res = await rig.client.sendMessage(m);
      expect(res.messaging_product).toBe('whatsapp');
      expect(res.contacts).toEqual([{ input: waId, wa_id: waId }]);
      expect(res.messages[0]?.id).toMatch(/^wamid\./);
      wamids.push(res.messages[0]?.id ?? '');
    }

    // Status webhooks are separate requests, each retried on its own: like the network's, they
    // may arrive out of order, so the wait is for all three, not for the last one sent.
    const playedOut = (s: MessageStatus[]) => ['sent', 'delivered', 'read'].every((st) => reached(st)(s));
    for (const [i, wamid] of wamids.entries()) {
      const seen = await statusesOf(wamid, playedOut);
      expect(new Set(seen.map((s) => s.status))).toEqual(new Set(['sent', 'delivered', 'read']));
      for (const s of seen) {
        expect(s.recipient_id).toBe(waId);
        expect(s.timestamp).toMatch(/^\d+$/);
        expect(s.pricing?.category).toBe(messages[i]?.type === 'template' ? 'utility' : 'service');
      }
    }
    // Every status webhook was signed with the number's app secret.
    for (const hook of rig.receiver.received) {
      expect(hook.signature).toBe(expectedSignature(seedOf(rig.sb).webhookSecret, hook.raw));
    }

    const received = await call(rig.sb, 'GET', `/sandbox/customers/${waId}/received`);
    const list = z
      .object({
        messages: z.array(z.object({ id: z.string(), type: z.string(), status: z.string().nullable() })),
      })
      .parse(received.json);
    expect(list.messages.map((m) => m.id)).toEqual(wamids);
    expect(list.messages.every((m) => m.status === 'read')).toBe(true);
    expect(rig.receiver.invalid).toEqual([]);
    expect(retries).toBe(0);
  });
});

describe('the customer service window', () => {
  it('refuses free-form with 131047 when the last customer message is 25 h old, and accepts after a new one', async () => {
    const waId = newCustomer();
    await customerSays(rig.sb, waId, { type: 'text', timestamp: Math.floor(Date.now() / 1000) - 25 * 3600 });
    const before = retries;
    const err = await networkFailureOf(
      rig.client.sendMessage({ to: waId, type: 'text', text: { body: 'still there?' } }),
    );
    expect(err).toMatchObject({
      kind: 'api',
      status: 400,
      code: NetworkErrorCode.reEngagementMessage,
      type: 'OAuthException',
      attempt: 1,
    });
    expect(err.details).toMatch(/24 hours/);
    expect(retries).toBe(before);

    await customerSays(rig.sb, waId, { type: 'text', text: { body: 'yes, here' } });
    const ok = await rig.client.sendMessage({ to: waId, type: 'text', text: { body: 'great' } });
    await statusesOf(ok.messages[0]?.id ?? '', reached('delivered'));
  });

  it('accepts a template outside the window', async () => {
    const waId = newCustomer();
    await customerSays(rig.sb, waId, {
      type: 'text',
      timestamp: Math.floor(Date.now() / 1000) - 3 * 24 * 3600,
    });
    const res = await rig.client.sendMessage({
      to: waId,
      type: 'template',
      template: { name: 'hello_world', language: { code: 'en_US' } },
    });
    expect(res.messages[0]?.message_status).toBe('accepted');
    const seen = await statusesOf(res.messages[0]?.id ?? '', reached('read'));
    expect(seen.find((s) => s.status === 'sent')?.pricing).toMatchObject({
      category: 'utility',
      billable: true,
    });
    // A customer never heard from can get a template too.
    await rig.client.sendMessage({
      to: newCustomer(),
      type: 'template',
      template: { name: 'hello_world', language: { code: 'en_US' } },
    });
  });

  it('keeps a window opened from an ad referral for 72 hours', async () => {
    const twoDaysAgo = Math.floor(Date.now() / 1000) - 48 * 3600;
    const fromAd = newCustomer();
    await customerSays(rig.sb, fromAd, { type: 'text', timestamp: twoDaysAgo, referral: {} });
    await rig.client.sendMessage({ to: fromAd, type: 'text', text: { body: 'thanks for your interest' } });

    const organic = newCustomer();
    await customerSays(rig.sb, organic, { type: 'text', timestamp: twoDaysAgo });
    const err = await networkFailureOf(
      rig.client.sendMessage({ to: organic, type: 'text', text: { body: 'hello?' } }),
    );
    expect(err.code).toBe(131047);
  });

  it('expires a window when the number’s clock moves forward', async () => {
    const waId = newCustomer();
    await customerSays(rig.sb, waId, { type: 'text' });
    await rig.client.sendMessage({ to: waId, type: 'text', text: { body: 'within the window' } });
    const moved = await call(rig.sb, 'PUT', '/sandbox/clock', { offset_seconds: 24 * 3600 + 60 });
    expect(moved.status).toBe(200);
    try {
      const err = await networkFailureOf(
        rig.client.sendMessage({ to: waId, type: 'text', text: { body: 'too late' } }),
      );
      expect(err.code).toBe(131047);
    } finally {
      await call(rig.sb, 'PUT', '/sandbox/clock', { offset_seconds: 0 });
    }
  });
});

describe('templates', () => {
  it('lists the account’s templates with their placeholders', async () => {
    const list = await rig.client.listTemplates();
    expect(list.total).toBe(list.waba_templates.length);
    const order = list.waba_templates.find((t) => t.name === 'order_update' && t.language === 'en');
    expect(order).toMatchObject({ status: 'approved', category: 'UTILITY' });
    expect(order?.components[0]?.text).toContain('{{2}}');
    const page = await rig.client.listTemplates({ limit: 2, offset: 1 });
    expect(page).toMatchObject({ count: 2, limit: 2, offset: 1, total: list.total });
  });

  it('answers 132001 for an unknown, unapproved or wrong-language template and 132000 for a wrong parameter count', async () => {
    const waId = newCustomer();
    const send = (template: Extract<OutboundMessageInput, { type: 'template' }>['template']) =>
      networkFailureOf(rig.client.sendMessage({ to: waId, type: 'template', template }));

    expect((await send({ name: 'no_such_template', language: { code: 'en' } })).code).toBe(132001);
    expect((await send({ name: 'order_update', language: { code: 'fr' } })).code).toBe(132001);
    expect((await send({ name: 'discount_blast', language: { code: 'en' } })).code).toBe(132001);
    const wrongCount = await send({
      name: 'order_update',
      language: { code: 'en' },
      components: [{ type: 'body', parameters: [{ type: 'text', text: 'only one' }] }],
    });
    expect(wrongCount).toMatchObject({ status: 400, code: 132000 });
    expect(wrongCount.details).toMatch(
      /body: number of localizable_params \(1\) does not match the expected number of params \(2\)/,
    );
    expect((await send({ name: 'appointment_reminder', language: { code: 'en' } })).code).toBe(132000);

    const full = await rig.client.sendMessage({
      to: waId,
      type: 'template',
      template: {
        name: 'appointment_reminder',
        language: { code: 'en' },
        components: [
          { type: 'header', parameters: [{ type: 'text', text: 'May 3' }] },
          {
            type: 'body',
            parameters: [
              { type: 'text', text: 'Ana' },
              { type: 'text', text: '10:30' },
            ],
          },
          { type: 'button', sub_type: 'url', index: 0, parameters: [{ type: 'text', text: '42' }] },
        ],
      },
    });
    expect(full.messages).toHaveLength(1);
  });
});

describe('bad requests', () => {
  const key = () => ({ 'D360-API-KEY': seedOf(rig.sb).apiKey });

  it('answers Cloud API error bodies', async () => {
    const waId = newCustomer();
    await customerSays(rig.sb, waId, { type: 'text' });
    const cases: Array<[unknown, number]> = [
      [{ messaging_product: 'whatsapp', to: waId, type: 'text', text: { body: 'x', bold: true } }, 100],
      [{ messaging_product: 'whatsapp', to: waId, type: 'text' }, 131008],
      [{ to: waId, type: 'text', text: { body: 'x' } }, 131008],
      [{ messaging_product: 'whatsapp', to: waId, type: 'carousel', carousel: {} }, 131009],
      [
        {
          messaging_product: 'whatsapp',
          to: waId,
          type: 'image',
          image: { id: '1', link: 'https://example.com/a.png' },
        },
        131009,
      ],
      [{ messaging_product: 'whatsapp', to: waId, type: 'image', image: { id: '999999' } }, 131009],
      [{ messaging_product: 'whatsapp', to: 'not a number', type: 'text', text: { body: 'x' } }, 131009],
      ['{"messaging_product": "whatsapp",', 100],
    ];
    for (const [body, code] of cases) {
      const res = await call(rig.sb, 'POST', '/messages', body, key());
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.json, JSON.stringify(body)).toMatchObject({
        error: {
          message: expect.stringMatching(new RegExp(`^\\(#${code}\\) `)),
          type: 'OAuthException',
          code,
          error_data: { messaging_product: 'whatsapp', details: expect.any(String) },
          fbtrace_id: expect.any(String),
        },
      });
    }
  });

  it('answers 401 with a Cloud API error body for a missing or unknown key', async () => {
    for (const headers of [{}, { 'D360-API-KEY': 'not-a-key' }]) {
      const res = await call(rig.sb, 'GET', '/v1/configs/templates', undefined, headers);
      expect(res.status).toBe(401);
      expect(res.json).toMatchObject({ error: { code: 0, type: 'OAuthException' } });
    }
    const other = clientFor(rig.sb, { apiKey: 'wrong-key' });
    const err = await networkFailureOf(other.listTemplates());
    expect(err).toMatchObject({ status: 401, code: 0, attempt: 1 });
    await other.close();
  });

  it('refuses to send what breaks the schema, before the network sees it', async () => {
    const err = await networkFailureOf(
      rig.client.sendMessage({
        to: newCustomer(),
        type: 'location',
        location: { latitude: 91, longitude: 0 },
      }),
    );
    expect(err.kind).toBe('invalid_request');
  });
});

describe('delivery outcomes', () => {
  it('fails undeliverable numbers and customers who blocked the business with 131026', async () => {
    for (const setting of [{ undeliverable: true }, { blocked: true }]) {
      const waId = newCustomer();
      await customerSays(rig.sb, waId, { type: 'text' });
      await call(rig.sb, 'PATCH', `/sandbox/customers/${waId}`, setting);
      const res = await rig.client.sendMessage({ to: waId, type: 'text', text: { body: 'hello' } });
      const seen = await statusesOf(res.messages[0]?.id ?? '', reached('failed'));
      expect(seen.map((s) => s.status)).toEqual(['failed']);
      expect(seen[0]?.errors?.[0]).toMatchObject({
        code: 131026,
        title: 'Message undeliverable',
        error_data: { details: expect.any(String) },
      });
    }
  });

  it('fails a message whose media link cannot be downloaded with 131053', async () => {
    const waId = newCustomer();
    await customerSays(rig.sb, waId, { type: 'text' });
    for (const link of [`${files.url}/missing.png`, `${files.url}/page.html`]) {
      const res = await rig.client.sendMessage({ to: waId, type: 'image', image: { link } });
      const seen = await statusesOf(res.messages[0]?.id ?? '', reached('failed'));
      expect(seen[0]?.errors?.[0]?.code).toBe(131053);
    }
  });

  it('stops at delivered for a customer who never reads', async () => {
    const waId = newCustomer();
    await customerSays(rig.sb, waId, { type: 'text' });
    await call(rig.sb, 'PATCH', `/sandbox/customers/${waId}`, { never_reads: true });
    const res = await rig.client.sendMessage({ to: waId, type: 'text', text: { body: 'hello' } });
    const wamid = res.messages[0]?.id ?? '';
    await statusesOf(wamid, reached('delivered'));
    const view = await call(rig.sb, 'GET', `/sandbox/customers/${waId}/received`);
    expect(view.json).toMatchObject({ messages: [{ id: wamid, status: 'delivered' }] });
  });

  it('refuses sends to a customer the business blocked with 130403', async () => {
    const waId = newCustomer();
    await customerSays(rig.sb, waId, { type: 'text' });
    await rig.client.blockUsers([waId]);
    const err = await networkFailureOf(
      rig.client.sendMessage({ to: waId, type: 'text', text: { body: 'hello' } }),
    );
    expect(err.code).toBe(130403);
    const unblocked = await rig.client.unblockUsers([waId]);
    expect(unblocked.block_users.removed_users).toEqual([{ input: waId, wa_id: waId }]);
    await rig.client.sendMessage({ to: waId, type: 'text', text: { body: 'hello again' } });
  });

  it('reports block failures per user for customers who have not written in 24 hours', async () => {
    const active = newCustomer();
    await customerSays(rig.sb, active, { type: 'text' });
    const silent = newCustomer();
    const res = await rig.client.blockUsers([active, silent]);
    expect(res.block_users.added_users).toEqual([{ input: active, wa_id: active }]);
    expect(res.block_users.failed_users?.[0]).toMatchObject({ input: silent, errors: [{ code: 131047 }] });
    expect(res.error?.code).toBe(139100);
    await rig.client.unblockUsers([active]);
  });
});

describe('numbers with their own behaviour', () => {
  async function numberWith(behaviour: Record<string, unknown>) {
    const res = await call(rig.sb, 'POST', '/sandbox/numbers', {
      behaviour: { status_delays_ms: { sent: 5, delivered: 5, read: 5 }, ...behaviour },
    });
    expect(res.status).toBe(201);
    const number = z.object({ api_key: z.string(), phone_number_id: z.string() }).parse(res.json);
    const own = clientFor(rig.sb, { apiKey: number.api_key });
    await own.setWebhook({ url: rig.receiver.url });
    return { number, client: own };
  }

  it('sometimes posts read without delivered, and duplicates statuses when enabled', async () => {
    const { number, client: own } = await numberWith({
      read_without_delivered_rate: 1,
      duplicate_status_rate: 1,
    });
    const waId = newCustomer();
    const q = `?phone_number_id=${number.phone_number_id}`;
    await call(rig.sb, 'POST', `/sandbox/customers/${waId}/messages${q}`, { type: 'text' });
    const res = await own.sendMessage({ to: waId, type: 'text', text: { body: 'quick read' } });
    const seen = await statusesOf(
      res.messages[0]?.id ?? '',
      (s) => s.filter((x) => x.status === 'read').length === 2,
    );
    expect(seen.filter((s) => s.status === 'sent')).toHaveLength(2);
    expect(seen.some((s) => s.status === 'delivered')).toBe(false);
    await own.close();
  });

  it('answers 429 with code 130429 beyond the per-number rate limit', async () => {
    const { number, client: own } = await numberWith({ rate_limit_per_second: 2 });
    const waId = newCustomer();
    await call(
      rig.sb,
      'POST',
      `/sandbox/customers/${waId}/messages?phone_number_id=${number.phone_number_id}`,
      {
        type: 'text',
      },
    );
    const key = { 'D360-API-KEY': number.api_key };
    const body = { messaging_product: 'whatsapp', to: waId, type: 'text', text: { body: 'burst' } };
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await call(rig.sb, 'POST', '/messages', body, key));
    const limited = answers.find((a) => a.status === 429);
    expect(limited?.json).toMatchObject({ error: { code: 130429, message: '(#130429) Rate limit hit' } });
    expect(Number(limited?.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    await own.close();
  });

  it('keeps each number’s customers, windows and keys apart', async () => {
    const { client: own } = await numberWith({});
    const waId = newCustomer();
    await customerSays(rig.sb, waId, { type: 'text' });
    // The customer wrote to the seed number, not to this one: no window here.
    const err = await networkFailureOf(own.sendMessage({ to: waId, type: 'text', text: { body: 'hi' } }));
    expect(isNetworkError(err, 131047)).toBe(true);
    await own.close();
  });
});
