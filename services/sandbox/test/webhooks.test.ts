import { waitFor } from '@switchboard/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { NetworkClient } from '../src/domain/wire.ts';
import type { SandboxHandle } from '../src/index.ts';
import {
  call,
  clientFor,
  customerSays,
  expectedSignature,
  newCustomer,
  seedOf,
  startFastSandbox,
  startWebhookReceiver,
  type WebhookReceiver,
} from './helpers.ts';

const Deliveries = z.object({
  deliveries: z.array(
    z.object({
      state: z.string(),
      body: z.string(),
      attempts: z.array(z.object({ status: z.number().nullable(), error: z.string().nullable() })),
    }),
  ),
});

let sb: SandboxHandle;
let receiver: WebhookReceiver;
let client: NetworkClient;

beforeAll(async () => {
  sb = await startFastSandbox();
  receiver = await startWebhookReceiver();
  client = clientFor(sb);
});

afterAll(async () => {
  await client.close();
  await sb.close();
  await receiver.close();
});

async function deliveriesOf(wamid: string) {
  const res = await call(sb, 'GET', `/sandbox/webhook-deliveries?wamid=${encodeURIComponent(wamid)}`);
  return Deliveries.parse(res.json).deliveries;
}

describe('webhook delivery', () => {
  it('retries with the same signed body until the receiver answers 200', async () => {
    await client.setWebhook({ url: receiver.url });
    const failing = new Set([0, 1]);
    const offset = receiver.received.length;
    let first = -1;
    receiver.respond = (n) => {
      if (first < 0) first = n;
      return failing.has(n - first) ? 503 : 200;
    };
    try {
      const wamid = await customerSays(sb, newCustomer(), { type: 'text' });
      await waitFor(async () => (await deliveriesOf(wamid))[0]?.state === 'delivered', 5_000, 'delivery');
      const [delivery] = await deliveriesOf(wamid);
      expect(delivery?.attempts.map((a) => a.status)).toEqual([503, 503, 200]);
      const hook = receiver.received[offset];
      expect(hook?.raw).toBe(delivery?.body);
      expect(hook?.signature).toBe(expectedSignature(seedOf(sb).webhookSecret, hook?.raw ?? ''));
    } finally {
      receiver.respond = () => 200;
    }
  });

  it('keeps an event until the webhook is configured', async () => {
    const number = await call(sb, 'POST', '/sandbox/numbers', {});
    const created = z
      .object({ api_key: z.string(), phone_number_id: z.string(), webhook_secret: z.string() })
      .parse(number.json);
    const wamid = z.object({ id: z.string() }).parse(
      (
        await call(
          sb,
          'POST',
          `/sandbox/customers/${newCustomer()}/messages?phone_number_id=${created.phone_number_id}`,
          {
            type: 'text',
          },
        )
      ).json,
    ).id;
    const early = await call(
      sb,
      'GET',
      `/sandbox/webhook-deliveries?phone_number_id=${created.phone_number_id}`,
    );
    expect(Deliveries.parse(early.json).deliveries[0]?.attempts[0]?.error).toMatch(/no webhook URL/);

    const own = clientFor(sb, { apiKey: created.api_key });
    await own.setWebhook({ url: receiver.url });
    await waitFor(async () => receiver.messages().some((m) => m.id === wamid), 5_000, 'late delivery');
    const hook = receiver.received.find((r) => r.raw.includes(wamid));
    expect(hook?.signature).toBe(expectedSignature(created.webhook_secret, hook?.raw ?? ''));
    await own.close();
  });

  it('gives up after the retry schedule', async () => {
    await client.setWebhook({ url: receiver.url });
    receiver.respond = () => 500;
    try {
      const wamid = await customerSays(sb, newCustomer(), { type: 'text' });
      await waitFor(async () => (await deliveriesOf(wamid))[0]?.state === 'gave_up', 5_000, 'giving up');
      const [delivery] = await deliveriesOf(wamid);
      // One first attempt plus one per entry of the test schedule (5 entries).
      expect(delivery?.attempts).toHaveLength(6);
    } finally {
      receiver.respond = () => 200;
    }
  });
});

describe('OpenAPI', () => {
  it('documents the Cloud API and control routes', async () => {
    const doc = await call(sb, 'GET', '/sandbox/schema/');
    expect(doc.status).toBe(200);
    const paths = Object.keys(z.object({ paths: z.record(z.string(), z.unknown()) }).parse(doc.json).paths);
    for (const p of [
      '/messages',
      '/media',
      '/{media_id}',
      '/v1/configs/templates',
      '/block_users',
      '/v1/configs/webhook',
      '/sandbox/numbers',
      '/sandbox/customers/{wa_id}/messages',
      '/sandbox/customers/{wa_id}/received',
      '/sandbox/clock',
      '/sandbox/faults',
    ]) {
      expect(paths).toContain(p);
    }
    const page = await fetch(`${sb.url}/sandbox/docs`);
    expect(page.status).toBe(200);
  });
});
