/**
 * Network events travel on two subjects by kind (customer messages, statuses and the rest); a
 * webhook's durable takes both, in stream order, and acknowledges the stream's other events
 * unread. A durable made while all network events shared one subject is widened without
 * losing what was pending on it.
 */
import { randomUUID } from 'node:crypto';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import {
  identityChanged,
  type NetworkEvent,
  networkEventsFilter,
  networkMessageEvent,
  networkStatusEvent,
  streamName,
} from '@switchboard/proto';
import { waitFor } from '@switchboard/testkit';
import { afterAll, describe, expect, it } from 'vitest';
import { durableConfigs, durableNames, ensureDurables } from '../src/workers/durables.ts';
import { closingReceivers, type Harness, networkBody, startHarness, testSettings } from './helpers.ts';

const harnesses: Harness[] = [];
const receiver = closingReceivers();
afterAll(async () => {
  for (const h of harnesses) await h.stop();
});

const event = (kinds: NetworkEvent['kinds'], text: string): NetworkEvent => {
  const eventId = randomUUID();
  return {
    event_id: eventId,
    kinds,
    wa_ids: ['491701234567'],
    received_at: Date.now(),
    body: networkBody(eventId, text),
  };
};

describe('network event subjects', () => {
  it('delivers messages and statuses in stream order and acknowledges the other events unread', async () => {
    const h = await startHarness();
    harnesses.push(h);
    const r = await receiver();
    const hook = await h.createWebhook(r.url, { ordered: true });
    const first = event(['message'], 'first');
    const status = event(['status'], 'a status');
    const last = event(['message'], 'last');
    await h.bus.publish(networkMessageEvent, first);
    await h.bus.publish(networkStatusEvent, status);
    // Another event kind of the same stream, which the durable's filter also matches.
    await h.bus.publish(identityChanged, { user_ids: [999], at: 1_800_000_000 });
    await h.bus.publish(networkMessageEvent, last);

    await waitFor(async () => r.requests.length === 3, 10_000, 'three deliveries');
    expect(r.requests.map((q) => q.body)).toEqual([first.body, status.body, last.body]);
    const jsm = await jetstreamManager(h.nc);
    const stream = streamName(h.bus.instance, 'events');
    await waitFor(
      async () => {
        const info = await jsm.consumers.info(stream, durableNames.main(hook.id));
        const last = (await jsm.streams.info(stream)).state.last_seq;
        // The webhook's own lifecycle event came first: the durable has seen and settled all.
        return info.num_pending === 0 && info.num_ack_pending === 0 && info.ack_floor.stream_seq === last;
      },
      10_000,
      'the identity event acknowledged unread',
    );
  });

  it('widens a durable made before the split, keeping what was pending on it', async () => {
    const h = await startHarness(testSettings(), { worker: false });
    harnesses.push(h);
    const jsm = await jetstreamManager(h.nc);
    const instance = h.bus.instance;
    const stream = streamName(instance, 'events');
    const webhookId = randomUUID();
    const settings = { ackWaitMs: 30_000, concurrency: 4 };
    const { main } = durableConfigs(instance, webhookId, false, settings);
    // From before the webhook existed: never delivered to it.
    await h.bus.publish(networkMessageEvent, event(['message'], 'before the webhook'));
    // As it was made before: the one subject all network events shared.
    await jsm.consumers.add(stream, { ...main, filter_subject: networkMessageEvent.subject(instance) });
    const delivered = event(['message'], 'delivered, its attempt unfinished at the upgrade');
    const pending = event(['message'], 'published before the upgrade');
    const status = event(['status'], 'published by an upgraded chats');
    await h.bus.publish(networkMessageEvent, delivered);
    await h.bus.publish(networkMessageEvent, pending);
    await h.bus.publish(networkStatusEvent, status);
    const old = await jetstream(h.nc).consumers.get(stream, durableNames.main(webhookId));
    // Taken and never settled (the durable's first delivery: nats-server 2.9 reports no ack floor).
    expect((await old.next({ expires: 2_000 }))?.string()).toContain(delivered.event_id);
    expect((await jsm.consumers.info(stream, durableNames.main(webhookId))).num_pending).toBe(1);

    await ensureDurables(jsm, instance, webhookId, false, settings);
    const info = await jsm.consumers.info(stream, durableNames.main(webhookId));
    expect(info.config.filter_subject).toBe(networkEventsFilter(instance));
    expect(info.num_pending).toBe(3);
    const later = event(['status'], 'published after');
    await h.bus.publish(networkStatusEvent, later);
    const consumer = await jetstream(h.nc).consumers.get(stream, durableNames.main(webhookId));
    const got: string[] = [];
    for (let i = 0; i < 4; i++) {
      const m = await consumer.next({ expires: 2_000 });
      if (m) {
        got.push(m.string());
        m.ack();
      }
    }
    // Made again once: a second ensure leaves it as it is.
    await ensureDurables(jsm, instance, webhookId, false, settings);
    expect((await jsm.consumers.info(stream, durableNames.main(webhookId))).num_pending).toBe(0);
    expect(got.map((data) => (JSON.parse(data) as NetworkEvent).event_id)).toEqual([
      delivered.event_id,
      pending.event_id,
      status.event_id,
      later.event_id,
    ]);
  });
});
