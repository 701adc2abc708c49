import { generateSecret } from '@switchboard/kit';
import { type Receiver, receivedWebhookHeaders, startReceiver } from '@switchboard/testkit/tools';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPartnerEventSender } from './partner-events.ts';

let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver({ eventId: () => undefined });
});

afterAll(async () => {
  await receiver.close();
});

describe('partner events', () => {
  it('are signed with Standard Webhooks headers that the reference library verifies, partner headers kept', async () => {
    const sender = createPartnerEventSender({ allowPrivateTargets: true });
    const secret = generateSecret();
    const outcome = await sender.deliver({
      url: receiver.url,
      headers: { 'x-partner': 'given', 'webhook-id': 'partner cannot set this' },
      body: { token: 'abc' },
      secret,
      messageId: 'msg_token_in-000000000001',
    });
    await sender.close();
    expect(outcome).toEqual({ ok: true });
    const got = receiver.requests.at(-1);
    expect(got?.headers['x-partner']).toBe('given');
    expect(got?.headers['webhook-id']).toBe('msg_token_in-000000000001');
    const verified = new Webhook(secret).verify(got?.body ?? '', receivedWebhookHeaders(got));
    expect(verified).toEqual({ token: 'abc' });
  });

  it('refuse loopback targets unless allowed, for good (no retry)', async () => {
    const sender = createPartnerEventSender({ allowPrivateTargets: false });
    const before = receiver.requests.length;
    const outcome = await sender.deliver({
      url: receiver.url,
      headers: {},
      body: { token: 'abc' },
      secret: generateSecret(),
      messageId: 'msg_token_x',
    });
    await sender.close();
    expect(outcome).toMatchObject({ ok: false, retryable: false });
    expect(receiver.requests.length).toBe(before);
  });

  it('a non-2xx answer is retried later', async () => {
    receiver.setReply(() => ({ status: 503 }));
    const sender = createPartnerEventSender({ allowPrivateTargets: true });
    const outcome = await sender.deliver({
      url: receiver.url,
      headers: {},
      body: { errors: [] },
      secret: generateSecret(),
      messageId: 'msg_errors_x',
    });
    await sender.close();
    receiver.setReply(() => ({}));
    expect(outcome).toEqual({ ok: false, reason: 'answered 503', retryable: true });
  });

  it.each([
    ['a name that is no token', { 'Bad Name': 'x' }],
    ['a value with CR/LF', { 'x-partner': 'a\r\nInjected: yes' }],
  ])(
    'a partner header undici refuses (%s, recorded before the create request checked them) fails for good, unsent',
    async (_name, headers) => {
      const sender = createPartnerEventSender({ allowPrivateTargets: true });
      const before = receiver.requests.length;
      const outcome = await sender.deliver({
        url: receiver.url,
        headers,
        body: { token: 'abc' },
        secret: generateSecret(),
        messageId: 'msg_token_bad_header',
      });
      await sender.close();
      expect(outcome).toMatchObject({
        ok: false,
        retryable: false,
        reason: expect.stringMatching(/^UND_ERR_INVALID_ARG: /),
      });
      expect(receiver.requests.length).toBe(before);
    },
  );

  it('hop-by-hop, framing and signature headers recorded before are left out; the event still goes', async () => {
    const sender = createPartnerEventSender({ allowPrivateTargets: true });
    const outcome = await sender.deliver({
      url: receiver.url,
      headers: {
        Expect: '100-continue',
        Upgrade: 'websocket',
        'Transfer-Encoding': 'chunked',
        'Keep-Alive': 'timeout=5',
        'Content-Type': 'text/plain',
        'x-partner': 'kept',
      },
      body: { token: 'abc' },
      secret: generateSecret(),
      messageId: 'msg_token_reserved_headers',
    });
    await sender.close();
    expect(outcome).toEqual({ ok: true });
    const got = receiver.requests.at(-1);
    expect(got?.headers['x-partner']).toBe('kept');
    expect(got?.headers.expect).toBeUndefined();
    expect(got?.headers.upgrade).toBeUndefined();
    expect(got?.headers['content-type']).toBe('application/json');
  });
});
