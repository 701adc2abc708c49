import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseRetryAfter } from '../retry-after.ts';
import { normalizeRecipient } from './common.ts';
import { NetworkError } from './errors.ts';
import { mediaLimitFor } from './media.ts';
import { OutboundMessageSchema, outboundMediaIds, outboundMediaLinks } from './outbound.ts';
import { hubSignature256, verifyHubSignature256 } from './signature.ts';
import { placeholderCount, type Template, templateParameterMismatches } from './templates.ts';
import { MessagesWebhookBodySchema, messagesWebhookBody } from './webhook.ts';

describe('webhook bodies', () => {
  it('parses the network’s documented status webhook', () => {
    // As Meta's status webhook reference shows it (sent, with conversation and pricing).
    const body = {
      object: 'whatsapp_business_account',
      entry: [
        {
          id: '1314702302917944',
          changes: [
            {
              value: {
                messaging_product: 'whatsapp',
                metadata: { display_phone_number: '15556459128', phone_number_id: '590968830767958' },
                statuses: [
                  {
                    id: 'wamid.HBgNNTUxNjk5MjMxODIyMhUCABEYEjgxQkVFRDVBQTVDODFDOTg3MQA=',
                    status: 'sent',
                    timestamp: '1750857384',
                    recipient_id: '5516992318222',
                    conversation: {
                      id: 'a75d17ad06104c51166f948319b03c6a',
                      expiration_timestamp: '1750943820',
                      origin: { type: 'service' },
                    },
                    pricing: { billable: true, pricing_model: 'CBP', category: 'service' },
                  },
                ],
              },
              field: 'messages',
            },
          ],
        },
      ],
    };
    const parsed = MessagesWebhookBodySchema.parse(body);
    expect(parsed.entry[0]?.changes[0]?.value.statuses?.[0]?.status).toBe('sent');
    // Unknown fields survive parsing: the inbox forwards what it does not understand yet.
    const withExtra = MessagesWebhookBodySchema.parse({ ...body, future_field: 1 });
    expect(withExtra).toHaveProperty('future_field', 1);
  });

  it('rejects a message without its type object', () => {
    const body = messagesWebhookBody(
      { wabaId: '1', displayPhoneNumber: '1', phoneNumberId: '2' },
      { messages: [{ from: '1', id: 'wamid.x', timestamp: '1', type: 'image' }] },
    );
    expect(MessagesWebhookBodySchema.safeParse(body).success).toBe(false);
  });
});

describe('signatures', () => {
  it('signs like an independent HMAC-SHA256 and verifies only the exact bytes', () => {
    const raw = '{"object":"whatsapp_business_account","entry":[]}';
    const sig = hubSignature256('app-secret', raw);
    expect(sig).toBe(`sha256=${createHmac('sha256', 'app-secret').update(raw).digest('hex')}`);
    expect(verifyHubSignature256('app-secret', raw, sig)).toBe(true);
    expect(verifyHubSignature256('app-secret', `${raw} `, sig)).toBe(false);
    expect(verifyHubSignature256('other', raw, sig)).toBe(false);
    expect(verifyHubSignature256('app-secret', raw, undefined)).toBe(false);
  });
});

describe('outbound messages', () => {
  it('wants exactly one of id and link for media', () => {
    const base = { messaging_product: 'whatsapp', to: '4915112345678', type: 'image' };
    expect(OutboundMessageSchema.safeParse({ ...base, image: { id: '1' } }).success).toBe(true);
    expect(
      OutboundMessageSchema.safeParse({ ...base, image: { link: 'https://x.test/a.png' } }).success,
    ).toBe(true);
    expect(OutboundMessageSchema.safeParse({ ...base, image: {} }).success).toBe(false);
    expect(
      OutboundMessageSchema.safeParse({ ...base, image: { id: '1', link: 'https://x.test/a.png' } }).success,
    ).toBe(false);
  });

  it('finds media wherever a message type nests it', () => {
    const m = OutboundMessageSchema.parse({
      messaging_product: 'whatsapp',
      to: '4915112345678',
      type: 'template',
      template: {
        name: 'spring_sale',
        language: { code: 'en' },
        components: [
          { type: 'header', parameters: [{ type: 'image', image: { link: 'https://x.test/sale.png' } }] },
          { type: 'body', parameters: [{ type: 'document', document: { id: '77' } }] },
        ],
      },
    });
    expect(outboundMediaLinks(m)).toEqual(['https://x.test/sale.png']);
    expect(outboundMediaIds(m)).toEqual(['77']);
  });

  it('normalizes recipients the way the network derives wa_ids', () => {
    expect(normalizeRecipient('+49 (151) 123-45678')).toBe('4915112345678');
  });
});

describe('templates', () => {
  const template: Template = {
    name: 'appointment_reminder',
    language: 'en',
    status: 'approved',
    category: 'UTILITY',
    components: [
      { type: 'HEADER', format: 'TEXT', text: 'On {{1}}' },
      { type: 'BODY', text: 'Hi {{1}}, at {{2}}; again {{1}}.' },
      {
        type: 'BUTTONS',
        buttons: [
          { type: 'QUICK_REPLY', text: 'Move' },
          { type: 'URL', text: 'Manage', url: 'https://x.test/{{1}}' },
        ],
      },
    ],
  };

  it('counts distinct placeholders, positional or named', () => {
    expect(placeholderCount('Hi {{1}}, at {{2}}; again {{1}}.')).toBe(2);
    expect(placeholderCount('Hi {{first_name}}')).toBe(1);
    expect(placeholderCount(undefined)).toBe(0);
  });

  it('reports each part whose parameter count is off', () => {
    const text = (t: string) => ({ type: 'text' as const, text: t });
    expect(
      templateParameterMismatches(template, [
        { type: 'header', parameters: [text('May 3')] },
        { type: 'body', parameters: [text('Ana'), text('10:30')] },
        { type: 'button', sub_type: 'url', index: 1, parameters: [text('42')] },
      ]),
    ).toEqual([]);
    expect(templateParameterMismatches(template, [{ type: 'body', parameters: [text('Ana')] }])).toEqual([
      { slot: 'header', expected: 1, supplied: 0 },
      { slot: 'body', expected: 2, supplied: 1 },
      { slot: 'button:1', expected: 1, supplied: 0 },
    ]);
  });
});

describe('client helpers', () => {
  it('reads Retry-After as seconds or an HTTP date', () => {
    expect(parseRetryAfter('2')).toBe(2000);
    expect(parseRetryAfter('Thu, 01 Jan 1970 00:00:10 GMT', 4_000)).toBe(6_000);
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(parseRetryAfter(undefined)).toBeUndefined();
  });

  it('retries throttling, server errors and lost connections only', () => {
    const api = (status: number) => new NetworkError({ kind: 'api', operation: 'op', message: 'x', status });
    expect([429, 500, 503].map((s) => api(s).retryable)).toEqual([true, true, true]);
    expect([400, 401, 404].map((s) => api(s).retryable)).toEqual([false, false, false]);
    expect(new NetworkError({ kind: 'connection', operation: 'op', message: 'x' }).retryable).toBe(true);
    expect(new NetworkError({ kind: 'invalid_response', operation: 'op', message: 'x' }).retryable).toBe(
      false,
    );
  });

  it('knows the network’s media ceilings', () => {
    expect(mediaLimitFor('audio/ogg; codecs=opus')).toBe(16 * 1024 * 1024);
    expect(mediaLimitFor('image/webp')).toBe(500 * 1024);
    expect(mediaLimitFor('image/gif')).toBeUndefined();
  });
});
