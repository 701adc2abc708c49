import { waitFor } from '@switchboard/testkit';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  call,
  clientFor,
  customerSays,
  expectedSignature,
  newCustomer,
  sandboxRig,
  seedOf,
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

const rig = sandboxRig({ connect: false });

async function deliveriesOf(wamid: string) {
  const res = await call(rig.sb, 'GET', `/sandbox/webhook-deliveries?wamid=${encodeURIComponent(wamid)}`);
  return Deliveries.parse(res.json).deliveries;
}

describe('webhook delivery', () => {
  it('retries with the same signed body until the receiver answers 200', async () => {
    await rig.client.setWebhook({ url: rig.receiver.url });
    const failing = new Set([0, 1]);
    const offset = rig.receiver.received.length;
    let first = -1;
    rig.receiver.respond = (n) => {
      if (first < 0) first = n;
      return failing.has(n - first) ? 503 : 200;
    };
    try {
      const wamid = await customerSays(rig.sb, newCustomer(), { type: 'text' });
      await waitFor(async () => (await deliveriesOf(wamid))[0]?.state === 'delivered', 5_000, 'delivery');
      const [delivery] = await deliveriesOf(wamid);
      expect(delivery?.attempts.map((a) => a.status)).toEqual([503, 503, 200]);
      const hook = rig.receiver.received[offset];
      expect(hook?.raw).toBe(delivery?.body);
      expect(hook?.signature).toBe(expectedSignature(seedOf(rig.sb).webhookSecret, hook?.raw ?? ''));
    } finally {
      rig.receiver.respond = () => 200;
    }
  });

  it('keeps an event until the webhook is configured', async () => {
    const number = await call(rig.sb, 'POST', '/sandbox/numbers', {});
    const created = z
      .object({ api_key: z.string(), phone_number_id: z.string(), webhook_secret: z.string() })
      .parse(number.json);
    const wamid = z.object({ id: z.string() }).parse(
      (
        await call(
          rig.sb,
          'POST',
          `/sandbox/customers/${newCustomer()}/messages?phone_number_id=${created.phone_number_id}`,
          {
            type: 'text',
          },
        )
      ).json,
    ).id;
    const early = await call(
      rig.sb,
      'GET',
      `/sandbox/webhook-deliveries?phone_number_id=${created.phone_number_id}`,
    );
    expect(Deliveries.parse(early.json).deliveries[0]?.attempts[0]?.error).toMatch(/no webhook URL/);

    const own = clientFor(rig.sb, { apiKey: created.api_key });
    await own.setWebhook({ url: rig.receiver.url });
    await waitFor(async () => rig.receiver.messages().some((m) => m.id === wamid), 5_000, 'late delivery');
    const hook = rig.receiver.received.find((r) => r.raw.includes(wamid));
    expect(hook?.signature).toBe(expectedSignature(created.webhook_secret, hook?.raw ?? ''));
    await own.close();
  });

  it('gives up after the retry schedule', async () => {
    await rig.client.setWebhook({ url: rig.receiver.url });
    rig.receiver.respond = () => 500;
    try {
      const wamid = await customerSays(rig.sb, newCustomer(), { type: 'text' });
      await waitFor(async () => (await deliveriesOf(wamid))[0]?.state === 'gave_up', 5_000, 'giving up');
      const [delivery] = await deliveriesOf(wamid);
      // One first attempt plus one per entry of the test schedule (5 entries).
      expect(delivery?.attempts).toHaveLength(6);
    } finally {
      rig.receiver.respond = () => 200;
    }
  });
});

describe('OpenAPI', () => {
  it('documents the Cloud API and control routes', async () => {
    const doc = await call(rig.sb, 'GET', '/sandbox/schema/');
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
    const page = await fetch(`${rig.sb.url}/sandbox/docs`);
    expect(page.status).toBe(200);
  });
});
