import { createECDH, randomBytes } from 'node:crypto';
import { messagesWebhookBody } from '@switchboard/proto';
import { describe, expect, it } from 'vitest';
import { notificationsOf } from '../workers/push-notifier.ts';
import { isExpired, parseWebPushToken } from './push-tokens.ts';

const ua = createECDH('prime256v1');
ua.generateKeys();
const keys = { p256dh: ua.getPublicKey().toString('base64url'), auth: randomBytes(16).toString('base64url') };

describe('parseWebPushToken', () => {
  it('accepts a PushSubscription.toJSON() string', () => {
    const token = JSON.stringify({
      endpoint: 'https://push.example.net/send/abc',
      expirationTime: null,
      keys,
    });
    expect(parseWebPushToken(token)).toMatchObject({
      ok: true,
      value: { endpoint: 'https://push.example.net/send/abc' },
    });
  });
  it.each([
    ['not JSON', 'abc'],
    ['no keys', JSON.stringify({ endpoint: 'https://push.example.net/x' })],
    ['an endpoint that is no URL', JSON.stringify({ endpoint: 'push', keys })],
    [
      'a short p256dh',
      JSON.stringify({ endpoint: 'https://p.example/x', keys: { ...keys, p256dh: 'AAAA' } }),
    ],
    [
      'a long auth',
      JSON.stringify({ endpoint: 'https://p.example/x', keys: { ...keys, auth: keys.p256dh } }),
    ],
    ['a file endpoint', JSON.stringify({ endpoint: 'file:///etc/passwd', keys })],
  ])('refuses %s', (_name, token) => {
    expect(parseWebPushToken(token).ok).toBe(false);
  });
});

describe('isExpired', () => {
  it('expires a token not registered again within the TTL', () => {
    const now = new Date('2026-03-01T00:00:00Z');
    expect(isExpired(new Date('2025-12-31T00:00:00Z'), 60, now)).toBe(false);
    expect(isExpired(new Date('2025-12-30T23:59:59Z'), 60, now)).toBe(true);
  });
});

describe('notificationsOf', () => {
  // Shape of the Cloud API messages webhook (Meta's webhook reference, "messages" field).
  const body = JSON.stringify(
    messagesWebhookBody(
      { wabaId: '1', displayPhoneNumber: '1', phoneNumberId: '1' },
      {
        contacts: [{ wa_id: '4915550001', profile: { name: 'Ana' } }],
        messages: [
          { from: '4915550001', id: 'wamid.1', type: 'text', text: { body: 'Hi!' }, timestamp: '1' },
          { from: '4915550002', id: 'wamid.2', type: 'image', timestamp: '1' },
        ],
      },
    ),
  );
  it('makes one notification per customer message, named as the network names the customer', () => {
    expect(notificationsOf(body)).toEqual([
      { title: 'Ana', body: 'Hi!', wa_id: '4915550001', message_id: 'wamid.1' },
      { title: '+4915550002', body: '(image)', wa_id: '4915550002', message_id: 'wamid.2' },
    ]);
  });
  it('makes none for statuses or what is not a webhook body', () => {
    expect(notificationsOf('{"entry":[{"changes":[{"value":{"statuses":[]}}]}]}')).toEqual([]);
    expect(notificationsOf('not json')).toEqual([]);
  });
});
