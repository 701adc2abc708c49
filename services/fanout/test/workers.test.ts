import { fileURLToPath } from 'node:url';
import { jetstreamManager } from '@nats-io/jetstream';
import type { NetworkEvent } from '@switchboard/proto';
import { fanoutRpc, streamName } from '@switchboard/proto';
import {
  admin,
  type Receiver,
  type ServiceProcess,
  spawnService,
  startReceiver,
  testNatsUrl,
  waitFor,
} from '@switchboard/testkit';
import { afterAll, describe, expect, it } from 'vitest';
import { type Harness, publishEvent, startHarness, TEST_SECRET_KEY } from './helpers.ts';

const harnesses: Harness[] = [];
const receivers: Receiver[] = [];
const children: ServiceProcess[] = [];

afterAll(async () => {
  for (const c of children) await c.stop('SIGKILL');
  for (const h of harnesses) await h.stop();
  await Promise.all(receivers.map((r) => r.close()));
});

const mainTs = fileURLToPath(new URL('../src/main.ts', import.meta.url));

function spawnFanout(h: Harness): ServiceProcess {
  const child = spawnService(mainTs, {
    DATABASE_URL: h.database.url,
    INBOX_SECRET_KEY: TEST_SECRET_KEY,
    NATS_URL: testNatsUrl(),
    INSTANCE_ID: h.bus.instance,
    LOG_LEVEL: 'info',
    OTEL_SDK_DISABLED: 'true',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    WEBHOOK_ATTEMPT_TIMEOUT: '1s',
    // Short, so what the killed worker held comes back quickly.
    WEBHOOK_ACK_WAIT: '2500ms',
    WEBHOOK_RETRY_SCHEDULE: '0,100ms,100ms,100ms,100ms',
    WEBHOOK_RETRY_JITTER: '0',
  });
  children.push(child);
  return child;
}

describe('fanout workers', () => {
  it('splits one webhook between two workers: both deliver, nothing twice', async () => {
    const h = await startHarness();
    harnesses.push(h);
    const second = await h.startWorker();
    const r = await startReceiver(() => ({ status: 200, delayMs: 15 }));
    receivers.push(r);
    await h.createWebhook(r.url);
    await waitFor(async () => second.supervisor.running().length === 1, 10_000, 'second worker consuming');
    const events: NetworkEvent[] = [];
    for (let i = 0; i < 80; i++) events.push(await publishEvent(h.bus, `shared ${i}`));
    await waitFor(
      async () => events.every((e) => r.forEvent(e.event_id).length >= 1),
      15_000,
      'all delivered',
    );
    for (const e of events) expect(r.forEvent(e.event_id)).toHaveLength(1);
    const first = h.fanout.stats().attempts;
    const other = second.stats().attempts;
    expect(first + other).toBe(80);
    expect(first).toBeGreaterThan(0);
    expect(other).toBeGreaterThan(0);
  });

  it('loses nothing when a fanout process is killed mid-stream', async () => {
    const h = await startHarness(undefined, { worker: false });
    harnesses.push(h);
    const first = spawnFanout(h);
    const rs = [
      await startReceiver(() => ({ status: 200, delayMs: 25 })),
      await startReceiver(() => ({ status: 200, delayMs: 25 })),
    ];
    receivers.push(...rs);
    // The child answers management requests once it is up.
    await waitFor(
      async () => {
        await h.bus.request(fanoutRpc.list, { principal: admin, limit: 1, offset: 0 }, { timeoutMs: 500 });
        return true;
      },
      30_000,
      'fanout child answering',
    ).catch((err: unknown) => {
      throw new Error(`${String(err)}\n${first.output()}`);
    });
    const hooks: string[] = [];
    for (const r of rs) hooks.push((await h.createWebhook(r.url)).id);

    const events: NetworkEvent[] = [];
    for (let i = 0; i < 120; i++) events.push(await publishEvent(h.bus, `stream ${i}`));
    await waitFor(async () => rs.every((r) => r.requests.length >= 15), 20_000, 'deliveries under way');
    await first.stop('SIGKILL');
    const deliveredBeforeKill = rs.map((r) => r.requests.length);
    expect(deliveredBeforeKill.every((n) => n < 120)).toBe(true);

    const second = spawnFanout(h);
    await waitFor(
      async () => rs.every((r) => events.every((e) => r.forEvent(e.event_id).length >= 1)),
      40_000,
      'every event at every webhook',
    ).catch((err: unknown) => {
      throw new Error(`${String(err)}\n${first.output()}${second.output()}`);
    });
    // What the killed worker had in flight comes back after AckWait: wait until every event is
    // acknowledged on every webhook's durable, so every delivery has ended.
    const jsm = await jetstreamManager(h.nc);
    await waitFor(
      async () => {
        for (const id of hooks) {
          const info = await jsm.consumers.info(streamName(h.bus.instance, 'events'), `fanout-wh-${id}`);
          if (info.num_pending > 0 || info.num_ack_pending > 0) return false;
        }
        return true;
      },
      30_000,
      'every event acknowledged',
    );
    expect(await second.stop('SIGTERM')).toBe(0);

    // Every delivery a receiver got is in the attempt log: an event is acknowledged only
    // after its attempt is stored, so the kill could not leave a delivery unlogged.
    const logged = new Set(
      (
        await h.db.selectFrom('webhook_attempts').select('message_id').where('success', '=', true).execute()
      ).map((a) => a.message_id),
    );
    const received = rs.flatMap((r) => r.requests.map((q) => String(q.headers['webhook-id'])));
    expect(received.filter((id) => !logged.has(id))).toEqual([]);
  });
});
