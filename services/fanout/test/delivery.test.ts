import type { NetworkEvent } from '@switchboard/proto';
import { fanoutRpc } from '@switchboard/proto';
import { admin, receivedWebhookHeaders, waitFor } from '@switchboard/testkit';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closingReceivers, type Harness, publishEvent, startHarness } from './helpers.ts';

let h: Harness;
const receiver = closingReceivers();

beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.stop();
});

describe('delivery', () => {
  it('delivers one event to three webhooks with the body unchanged and valid signatures', async () => {
    const rs = await Promise.all([receiver(), receiver(), receiver()]);
    const hooks = await Promise.all(
      rs.map((r, i) => h.createWebhook(r.url, { headers: { Authorization: `Bearer receiver-${i}` } })),
    );
    const event = await publishEvent(h.bus);
    await waitFor(
      async () => rs.every((r) => r.forEvent(event.event_id).length === 1),
      10_000,
      'three deliveries',
    );

    const ids = new Set<string>();
    rs.forEach((r, i) => {
      const [got] = r.forEvent(event.event_id);
      const hook = hooks[i];
      if (!got || !hook) throw new Error('missing delivery');
      expect(got.body).toBe(event.body);
      expect(got.headers['content-type']).toBe('application/json');
      expect(got.headers.authorization).toBe(`Bearer receiver-${i}`);
      const verified = new StandardWebhook(hook.secret).verify(got.body, receivedWebhookHeaders(got));
      expect(verified).toEqual(JSON.parse(event.body));
      ids.add(String(got.headers['webhook-id']));
    });
    // The id is per event and webhook.
    expect(ids.size).toBe(3);
  });

  it('retries 500s with the same webhook-id and delivers exactly once after them', async () => {
    const r = await receiver((_req, index) => ({ status: index < 2 ? 500 : 200, body: 'boom' }));
    const hook = await h.createWebhook(r.url);
    const event = await publishEvent(h.bus);
    await waitFor(async () => r.answered >= 3, 10_000, 'three attempts');
    // A later event proves the consumer moved on; the first one must not have come again.
    r.setReply(() => ({ status: 200 }));
    const next = await publishEvent(h.bus);
    await waitFor(async () => r.forEvent(next.event_id).length === 1, 10_000, 'next event');

    const attempts = r.forEvent(event.event_id);
    expect(attempts).toHaveLength(3);
    expect(new Set(attempts.map((a) => a.headers['webhook-id'])).size).toBe(1);
    expect(attempts.every((a) => a.body === event.body)).toBe(true);

    const log = await h.bus.request(fanoutRpc.deliveries, {
      principal: admin,
      id: hook.id,
      limit: 10,
      offset: 0,
    });
    const forEvent = log.results
      .filter((a) => a.event_id === event.event_id)
      .sort((a, b) => a.attempt - b.attempt);
    expect(forEvent.map((a) => [a.attempt, a.status_code, a.success])).toEqual([
      [1, 500, false],
      [2, 500, false],
      [3, 200, true],
    ]);
    expect(forEvent[0]?.response_excerpt).toBe('boom');
    // Times are integer POSIX seconds, like every time of the inbox API.
    const now = Math.floor(Date.now() / 1000);
    const [first] = forEvent;
    expect(Number.isInteger(first?.attempted_at)).toBe(true);
    expect(Math.abs((first?.attempted_at ?? 0) - now)).toBeLessThanOrEqual(15);
    expect(Number.isInteger(first?.next_attempt_at)).toBe(true);
    expect(first?.next_attempt_at).toBeGreaterThanOrEqual(first?.attempted_at ?? Number.POSITIVE_INFINITY);
    expect(forEvent[2]?.next_attempt_at).toBeNull();
  });

  it('keeps healthy webhooks fast while one endpoint is dead and one takes 5 s', async () => {
    const healthy = await Promise.all([receiver(), receiver()]);
    const slow = await receiver(() => ({ status: 200, delayMs: 5_000 }));
    const dead = await receiver();
    await dead.close();
    for (const r of [...healthy, slow, dead]) await h.createWebhook(r.url);

    const events: NetworkEvent[] = [];
    for (let i = 0; i < 20; i++) events.push(await publishEvent(h.bus, `burst ${i}`));
    await waitFor(
      async () => healthy.every((r) => events.every((e) => r.forEvent(e.event_id).length === 1)),
      10_000,
      'healthy deliveries',
    );
    // Everything reached the healthy endpoints before the slow one answered even once: the
    // ordering is the proof, not a time bound.
    expect(slow.answered).toBe(0);
    await waitFor(async () => slow.answered === 20, 20_000, 'slow endpoint catches up');
    // The slow endpoint had its own 16 slots, all in use, and got the rest after.
    expect(slow.maxInFlight).toBe(16);
  });

  it('delivers an ordered webhook one event at a time, in order, across a retry', async () => {
    const r = await receiver((_req, index) => ({ status: index === 0 ? 503 : 200, delayMs: 20 }));
    await h.createWebhook(r.url, { ordered: true });
    const events: NetworkEvent[] = [];
    for (let i = 0; i < 8; i++) events.push(await publishEvent(h.bus, `ordered ${i}`));
    await waitFor(
      async () => events.every((e) => r.forEvent(e.event_id).some(() => true)),
      10_000,
      'ordered',
    );
    await waitFor(async () => r.answered === 9, 10_000, 'all answered');
    expect(r.maxInFlight).toBe(1);
    const order = r.requests.map((q) => q.eventId);
    expect(order).toEqual([events[0]?.event_id, ...events.map((e) => e.event_id)]);
  });

  it('delivers to the new URL after a re-target', async () => {
    const before = await receiver();
    const after = await receiver();
    const hook = await h.createWebhook(before.url);
    const first = await publishEvent(h.bus);
    await waitFor(async () => before.forEvent(first.event_id).length === 1, 10_000, 'first delivery');
    const updated = await h.bus.request(fanoutRpc.update, { principal: admin, id: hook.id, url: after.url });
    expect(updated.url).toBe(after.url);
    const second = await publishEvent(h.bus);
    await waitFor(
      async () => after.forEvent(second.event_id).length === 1,
      10_000,
      'delivery to the new URL',
    );
    expect(before.forEvent(second.event_id)).toHaveLength(0);
  });

  it('signs with both secrets during a rotation, and standardwebhooks accepts either', async () => {
    const r = await receiver();
    const hook = await h.createWebhook(r.url);
    const rotated = await h.bus.request(fanoutRpc.rotateSecret, { principal: admin, id: hook.id });
    expect(rotated.secret).not.toBe(hook.secret);
    // POSIX seconds, in the future: the grace period of the old secret.
    expect(Number.isInteger(rotated.previous_secret_expires_at)).toBe(true);
    expect(rotated.previous_secret_expires_at).toBeGreaterThan(Math.floor(Date.now() / 1000));
    expect(rotated.previous_secret_expires_at).toBeLessThan(Date.now());
    const event = await publishEvent(h.bus);
    await waitFor(async () => r.forEvent(event.event_id).length === 1, 10_000, 'delivery');
    const [got] = r.forEvent(event.event_id);
    if (!got) throw new Error('missing delivery');
    const headers = receivedWebhookHeaders(got);
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(new StandardWebhook(hook.secret).verify(got.body, headers)).toBeTruthy();
    expect(new StandardWebhook(rotated.secret).verify(got.body, headers)).toBeTruthy();
    expect(() =>
      new StandardWebhook('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw').verify(got.body, headers),
    ).toThrow();
  });
});
