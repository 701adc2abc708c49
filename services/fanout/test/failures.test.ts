import { lookup } from 'node:dns/promises';
import { hostname } from 'node:os';
import { isBlockedAddress } from '@switchboard/kit';
import type { NetworkEvent } from '@switchboard/proto';
import {
  fanoutRpc,
  type WebhookLifecycleEvent,
  WebhookLifecycleEventSchema,
  webhookLifecycle,
} from '@switchboard/proto';
import { admin, principal, waitFor } from '@switchboard/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closingReceivers, type Harness, publishEvent, startHarness, testSettings } from './helpers.ts';

/** This machine's host name when it resolves to a loopback address (it usually does, via /etc/hosts). */
const loopbackName = await lookup(hostname())
  .then((a) => (isBlockedAddress(a.address) ? hostname() : undefined))
  .catch(() => undefined);

let h: Harness;
const receiver = closingReceivers();
const lifecycle: WebhookLifecycleEvent[] = [];

beforeAll(async () => {
  h = await startHarness(
    testSettings({
      retry: { schedule: [0, 100, 100], jitter: 0, throttleFloorMs: 60_000, retryAfterCapMs: 10_000 },
      handlerRetryMs: 100,
    }),
  );
  h.nc.subscribe(webhookLifecycle.subject(h.bus.instance), {
    callback: (_err, msg) => {
      const parsed = WebhookLifecycleEventSchema.safeParse(msg.json());
      if (parsed.success) lifecycle.push(parsed.data);
    },
  });
});
afterAll(async () => {
  await h.stop();
});

describe('failures', () => {
  it('disables a webhook that answers 410 and keeps the event as a dead letter', async () => {
    const r = await receiver(() => ({ status: 410 }));
    const hook = await h.createWebhook(r.url);
    const event = await publishEvent(h.bus);
    await waitFor(
      async () => lifecycle.some((e) => e.webhook_id === hook.id && e.action === 'disabled'),
      10_000,
      'disabled event',
    );
    const got = await h.bus.request(fanoutRpc.get, { principal: admin, id: hook.id });
    expect(got.enabled).toBe(false);
    expect(got.disabled_reason).toBe('gone');
    expect(lifecycle.find((e) => e.webhook_id === hook.id && e.action === 'disabled')).toMatchObject({
      reason: 'gone',
      actor_user_id: null,
    });
    expect(r.forEvent(event.event_id)).toHaveLength(1);
    const letters = await h.db
      .selectFrom('webhook_dead_letters')
      .selectAll()
      .where('webhook_id', '=', hook.id)
      .execute();
    expect(letters.map((l) => [l.event_id, l.reason, l.body])).toEqual([
      [event.event_id, 'gone', event.body],
    ]);

    // Nothing more goes to a disabled webhook.
    await waitFor(async () => !h.fanout.supervisor.running().includes(hook.id), 5_000, 'worker stopped');
    const control = await receiver();
    await h.createWebhook(control.url);
    const later = await publishEvent(h.bus);
    await waitFor(async () => control.forEvent(later.event_id).length === 1, 10_000, 'control delivery');
    expect(r.forEvent(later.event_id)).toHaveLength(0);
  });

  it('honours Retry-After', async () => {
    const r = await receiver((_req, index) =>
      index === 0 ? { status: 503, headers: { 'retry-after': '2' } } : { status: 200 },
    );
    await h.createWebhook(r.url);
    const event = await publishEvent(h.bus);
    await waitFor(async () => r.forEvent(event.event_id).length === 2, 10_000, 'retry after two seconds');
    const [a, b] = r.forEvent(event.event_id);
    if (!a || !b) throw new Error('missing attempts');
    // The schedule alone would retry after 100 ms.
    expect(b.at - a.at).toBeGreaterThanOrEqual(2_000);
    expect(b.headers['webhook-id']).toBe(a.headers['webhook-id']);
  });

  it('dead-letters an event after the last attempt and replays it on request', async () => {
    const r = await receiver(() => ({ status: 500 }));
    // An agent who reads only chats assigned to them: the replay is judged on the chat's
    // assignment kept with the dead letter, as the first delivery was.
    const agent = {
      ...principal(77),
      permissions: {
        can_use_tags: true,
        can_read_chats: 'assigned' as const,
        can_write_to_chats: 'assigned' as const,
      },
    };
    const hook = await h.createWebhook(r.url, { as: agent });
    const since = Date.now();
    const event = await publishEvent(h.bus, 'hello', [
      { wa_id: '491701234567', assigned_to_user: agent.user_id, assigned_group: null },
    ]);
    await waitFor(
      async () =>
        (
          await h.db
            .selectFrom('webhook_dead_letters')
            .select('id')
            .where('webhook_id', '=', hook.id)
            .execute()
        ).length === 1,
      10_000,
      'dead letter',
    );
    expect(r.forEvent(event.event_id)).toHaveLength(3);
    const log = await h.bus.request(fanoutRpc.deliveries, {
      principal: admin,
      id: hook.id,
      limit: 10,
      offset: 0,
    });
    expect(log.results.map((a) => [a.attempt, a.dead_lettered])).toEqual([
      [3, true],
      [2, false],
      [1, false],
    ]);

    r.setReply(() => ({ status: 200 }));
    const replay = await h.bus.request(fanoutRpc.replay, { principal: admin, id: hook.id, since_ms: since });
    expect(replay.replayed).toBe(1);
    await waitFor(async () => r.forEvent(event.event_id).length === 4, 10_000, 'replayed delivery');
    const attempts = r.forEvent(event.event_id);
    expect(attempts[3]?.body).toBe(event.body);
    expect(new Set(attempts.map((a) => a.headers['webhook-id'])).size).toBe(1);
    // Replayed once; asking again queues nothing.
    const again = await h.bus.request(fanoutRpc.replay, { principal: admin, id: hook.id, since_ms: since });
    expect(again.replayed).toBe(0);
    const afterReplay = await h.bus.request(fanoutRpc.deliveries, {
      principal: admin,
      id: hook.id,
      limit: 1,
      offset: 0,
    });
    expect(afterReplay.results[0]).toMatchObject({ trigger: 'replay', success: true, attempt: 1 });
  });

  it('uses up no attempt when the worker fails before its POST (the gateway not answering)', async () => {
    const r = await receiver((_req, index) => (index === 0 ? { status: 500 } : { status: 200 }));
    const owner = principal(78);
    const hook = await h.createWebhook(r.url, { as: owner });
    // More failures than the schedule has attempts: counted as attempts, they would dead-letter
    // the event without a single POST.
    h.failPrincipalLookups(owner.user_id, 5);
    const event = await publishEvent(h.bus);
    await waitFor(async () => r.forEvent(event.event_id).length === 2, 10_000, 'two POSTs');
    const log = await h.bus.request(fanoutRpc.deliveries, {
      principal: admin,
      id: hook.id,
      limit: 10,
      offset: 0,
    });
    expect(log.results.map((a) => [a.attempt, a.success])).toEqual([
      [2, true],
      [1, false],
    ]);
    const letters = await h.db
      .selectFrom('webhook_dead_letters')
      .select('id')
      .where('webhook_id', '=', hook.id)
      .execute();
    expect(letters).toEqual([]);
  });

  it('disables a webhook that keeps failing for longer than the threshold', async () => {
    const failing = await startHarness(
      testSettings({
        disableAfterMs: 600,
        retry: {
          schedule: [0, 200, 200, 200, 200, 200, 200, 200],
          jitter: 0,
          throttleFloorMs: 60_000,
          retryAfterCapMs: 1_000,
        },
      }),
    );
    try {
      const r = await receiver(() => ({ status: 502 }));
      const hook = await failing.createWebhook(r.url);
      const event: NetworkEvent = await publishEvent(failing.bus);
      await waitFor(
        async () =>
          (await failing.bus.request(fanoutRpc.get, { principal: admin, id: hook.id })).enabled === false,
        10_000,
        'disabled after failing',
      );
      const got = await failing.bus.request(fanoutRpc.get, { principal: admin, id: hook.id });
      expect(got.disabled_reason).toBe('failing');
      // POSIX seconds: the streak started within this test.
      expect(Number.isInteger(got.failing_since)).toBe(true);
      expect(Math.abs((got.failing_since ?? 0) - Math.floor(Date.now() / 1000))).toBeLessThanOrEqual(15);
      const letters = await failing.db.selectFrom('webhook_dead_letters').selectAll().execute();
      expect(letters.map((l) => [l.event_id, l.reason])).toEqual([[event.event_id, 'failing']]);

      // Enabling again clears the streak.
      const enabled = await failing.bus.request(fanoutRpc.update, {
        principal: admin,
        id: hook.id,
        enabled: true,
      });
      expect(enabled).toMatchObject({ enabled: true, disabled_reason: null, failing_since: null });
    } finally {
      await failing.stop();
    }
  });
});

describe('SSRF guard', () => {
  let guarded: Harness;
  beforeAll(async () => {
    guarded = await startHarness(testSettings({ allowPrivateTargets: false }));
  });
  afterAll(async () => {
    await guarded.stop();
  });

  it('refuses loopback and private literals when the webhook is saved', async () => {
    for (const url of [
      'http://127.0.0.1:9/hook',
      'http://[::1]:9/',
      'http://10.1.2.3/',
      'http://localhost:9/',
      'http://169.254.169.254/',
      // IPv6 spellings of IPv4 loopback and metadata addresses.
      'http://[::7f00:1]:9/',
      'http://[::ffff:0:7f00:1]:9/',
      'http://[64:ff9b::a9fe:a9fe]/',
      'http://[2002:a9fe:a9fe::1]/',
    ]) {
      const err = await guarded.createWebhook(url).catch((e: unknown) => e);
      expect(err).toMatchObject({
        code: 'validation_error',
        status: 400,
        fields: { url: [expect.any(String)] },
      });
    }
  });

  it.runIf(loopbackName)('refuses at connect time a host name that resolves to loopback', async () => {
    const name = loopbackName ?? '';
    const r = await receiver();
    const hook = await guarded.createWebhook(`http://${name}:${r.port}/hook`);
    const outcome = await guarded.bus.request(
      fanoutRpc.test,
      { principal: admin, id: hook.id },
      { timeoutMs: 20_000 },
    );
    expect(outcome).toMatchObject({ success: false, error_class: 'blocked_address', status_code: null });

    const event = await publishEvent(guarded.bus);
    await waitFor(
      async () => {
        const log = await guarded.bus.request(fanoutRpc.deliveries, {
          principal: admin,
          id: hook.id,
          limit: 10,
          offset: 0,
        });
        return log.results.some((a) => a.event_id === event.event_id && a.error_class === 'blocked_address');
      },
      10_000,
      'blocked attempt logged',
    );
    expect(r.requests).toHaveLength(0);
  });
});
