import { createHash } from 'node:crypto';
import { freePort } from '@switchboard/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mediaFixtures } from '../src/domain/fixtures/media.ts';
import { createNetworkClient, type NetworkClient, type NetworkRetryEvent } from '../src/domain/wire.ts';
import type { SandboxHandle } from '../src/index.ts';
import { call, clientFor, customerSays, networkFailureOf, newCustomer, startFastSandbox } from './helpers.ts';

let sb: SandboxHandle;
let client: NetworkClient;
const retries: NetworkRetryEvent[] = [];

beforeAll(async () => {
  sb = await startFastSandbox();
  client = clientFor(sb, { onRetry: (e) => retries.push(e) });
});

afterAll(async () => {
  await client.close();
  await sb.close();
});

async function inject(
  status: 429 | 500 | 502 | 503,
  count: number,
  retryAfterSeconds?: number,
): Promise<void> {
  const res = await call(sb, 'POST', '/sandbox/faults', {
    status,
    count,
    ...(retryAfterSeconds === undefined ? {} : { retry_after_seconds: retryAfterSeconds }),
  });
  expect(res.status).toBe(200);
}

describe('retries', () => {
  it('retries injected 500s and succeeds', async () => {
    retries.length = 0;
    await inject(500, 2);
    const list = await client.listTemplates();
    expect(list.waba_templates.length).toBeGreaterThan(0);
    expect(retries.map((r) => [r.operation, r.attempt, r.error.status, r.error.code])).toEqual([
      ['listTemplates', 1, 500, 131000],
      ['listTemplates', 2, 500, 131000],
    ]);
  });

  it('retries a send after a 503 and delivers it once accepted', async () => {
    retries.length = 0;
    const waId = newCustomer();
    await customerSays(sb, waId, { type: 'text' });
    await inject(503, 1);
    const res = await client.sendMessage({ to: waId, type: 'text', text: { body: 'after the outage' } });
    expect(res.messages).toHaveLength(1);
    expect(retries).toHaveLength(1);
    const received = await call(sb, 'GET', `/sandbox/customers/${waId}/received`);
    expect(received.json).toMatchObject({ messages: [{ id: res.messages[0]?.id }] });
  });

  it('honours Retry-After on 429', async () => {
    retries.length = 0;
    await inject(429, 1, 1);
    const started = performance.now();
    await client.listTemplates();
    const elapsed = performance.now() - started;
    expect(retries).toHaveLength(1);
    expect(retries[0]?.error).toMatchObject({ status: 429, code: 130429, retryAfterMs: 1000 });
    expect(retries[0]?.delayMs).toBeGreaterThanOrEqual(1000);
    // The client's own backoff is 10 ms here: only Retry-After explains a second's wait.
    expect(elapsed).toBeGreaterThanOrEqual(950);
  });

  it('gives up after its retries with the last error', async () => {
    retries.length = 0;
    await inject(500, 10);
    const err = await networkFailureOf(client.listTemplates());
    expect(err).toMatchObject({ kind: 'api', status: 500, code: 131000, attempt: 4, retryable: true });
    expect(retries).toHaveLength(3);
    await call(sb, 'DELETE', '/sandbox/faults');
  });

  it('does not retry a 400', async () => {
    retries.length = 0;
    const err = await networkFailureOf(
      client.sendMessage({ to: newCustomer(), type: 'text', text: { body: 'nobody wrote to us' } }),
    );
    expect(err).toMatchObject({ status: 400, code: 131047, attempt: 1, retryable: false });
    expect(retries).toEqual([]);
  });

  it('retries when nothing answers, then reports a connection error', async () => {
    const port = await freePort();
    const events: NetworkRetryEvent[] = [];
    const dead = createNetworkClient({
      baseUrl: `http://127.0.0.1:${port}`,
      apiKey: 'unused',
      retries: 2,
      minRetryDelayMs: 10,
      onRetry: (e) => events.push(e),
    });
    const err = await networkFailureOf(dead.listTemplates());
    expect(err).toMatchObject({ kind: 'connection', attempt: 3, retryable: true });
    expect(events).toHaveLength(2);
    await dead.close();
  });
});

describe('media', () => {
  it('uploads, describes, downloads and deletes media', async () => {
    const { data, mimeType } = mediaFixtures.sticker;
    const uploaded = await client.uploadMedia({ data, mimeType, filename: 'smile.webp' });
    expect(uploaded.id).toMatch(/^\d+$/);

    const info = await client.getMediaUrl(uploaded.id);
    expect(info).toMatchObject({
      id: uploaded.id,
      mime_type: 'image/webp',
      file_size: data.length,
      sha256: createHash('sha256').update(data).digest('hex'),
    });
    const file = await client.downloadMedia(info.url);
    expect(file.data.equals(data)).toBe(true);
    expect(file.sha256).toBe(info.sha256);

    // The download URL needs the number's key, like the provider's.
    const anonymous = await fetch(info.url);
    expect(anonymous.status).toBe(401);

    expect(await client.deleteMedia(uploaded.id)).toEqual({ success: true });
    const gone = await networkFailureOf(client.getMediaUrl(uploaded.id));
    expect(gone).toMatchObject({ status: 400, code: 100 });
    const stale = await networkFailureOf(client.downloadMedia(info.url));
    expect(stale.status).toBe(404);
  });

  it('refuses media types the network does not carry', async () => {
    const err = await networkFailureOf(
      client.uploadMedia({ data: Buffer.from('GIF89a'), mimeType: 'image/gif' }),
    );
    expect(err.kind).toBe('invalid_request');

    const form = new FormData();
    form.set('messaging_product', 'whatsapp');
    form.set('file', new Blob([Buffer.from('GIF89a')], { type: 'image/gif' }), 'a.gif');
    const res = await fetch(`${sb.url}/media`, {
      method: 'POST',
      headers: { 'D360-API-KEY': sb.seed?.apiKey ?? '' },
      body: form,
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: { code: 131053 } });
  });
});

describe('webhook configuration', () => {
  it('stores the number’s webhook URL', async () => {
    const set = await client.setWebhook({ url: 'http://127.0.0.1:9/hook', headers: { 'x-inbox': 'local' } });
    expect(set).toEqual({ url: 'http://127.0.0.1:9/hook', headers: { 'x-inbox': 'local' } });
    const seen = await call(sb, 'GET', '/v1/configs/webhook', undefined, {
      'D360-API-KEY': sb.seed?.apiKey ?? '',
    });
    expect(seen.json).toEqual(set);
  });
});
