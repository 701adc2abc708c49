import { jetstream } from '@nats-io/jetstream';
import { callService } from '@switchboard/gateway';
import { connectNats, type NatsConnection } from '@switchboard/kit';
import {
  type BusValidationError,
  defineConsumer,
  defineRpc,
  defineStream,
  instanceId,
  ServiceError,
  subjects,
} from '@switchboard/proto';
import { createBus } from '@switchboard/proto/bus';
import { testNatsUrl, uniqueInstanceId, waitFor } from '@switchboard/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';

const Job = z.object({ id: z.string(), poison: z.boolean() });
const job = defineStream({
  name: 'test.job',
  stream: 'commands',
  subject: (i) => subjects.command(i, 'job'),
  schema: Job,
});

const echo = defineRpc({
  name: 'test.echo',
  subject: (i) => subjects.rpc(i, 'test', 'echo'),
  request: z.object({ fail: z.enum(['no', 'bug', 'rpc']) }),
  response: z.object({ ok: z.boolean() }),
});

const keyed = defineRpc({
  name: 'test.keyed',
  subject: (i) => subjects.rpc(i, 'test', 'keyed'),
  request: z.object({ idempotency_key: z.string().optional(), text: z.string() }),
  response: z.object({ key: z.string() }),
  retryKeyField: 'idempotency_key',
});

let nc: NatsConnection;
beforeAll(async () => {
  nc = await connectNats(testNatsUrl(), 'bus-reliability-test');
});
afterAll(async () => {
  await nc.drain();
});

describe('consume: handlers, server slots and in-progress signals', () => {
  it('messages waiting for a delayed retry hold no handler: healthy ones pass while poison ones back off', async () => {
    const bus = await createBus(nc, instanceId(uniqueInstanceId('bus')));
    await bus.ensureStreams();
    // Two handlers; the server may hand out many more (those waiting for a delayed nak).
    const consumer = defineConsumer({
      durable: 'slots',
      message: job,
      ackWaitSeconds: 30,
      maxAckPending: 200,
      concurrency: 2,
    });
    let running = 0;
    let most = 0;
    const done: string[] = [];
    const c = await bus.consume(consumer, async (msg) => {
      running++;
      most = Math.max(most, running);
      try {
        await new Promise((r) => setTimeout(r, 20));
        // A poison message fails every time and comes back only after a minute.
        if (msg.poison) return { kind: 'nak', delayMs: 60_000 };
        done.push(msg.id);
        return undefined;
      } finally {
        running--;
      }
    });
    for (let i = 0; i < 20; i++) await bus.publish(job, { id: `p${i}`, poison: true });
    for (let i = 0; i < 5; i++) await bus.publish(job, { id: `h${i}`, poison: false });
    await waitFor(async () => done.length === 5, 10_000, 'the healthy messages behind 20 poison ones');
    await c.stop();
    expect(done.sort()).toEqual(['h0', 'h1', 'h2', 'h3', 'h4']);
    expect(most).toBeLessThanOrEqual(2);
  });

  it('a handler that runs longer than AckWait keeps its message: it is not delivered twice', async () => {
    const bus = await createBus(nc, instanceId(uniqueInstanceId('bus')));
    await bus.ensureStreams();
    const consumer = defineConsumer({ durable: 'slow', message: job, ackWaitSeconds: 1, maxAckPending: 4 });
    const deliveries: number[] = [];
    const c = await bus.consume(consumer, async (_msg, ctx) => {
      deliveries.push(ctx.deliveryCount);
      await new Promise((r) => setTimeout(r, 3_500));
      return undefined;
    });
    await bus.publish(job, { id: 'slow', poison: false });
    await waitFor(async () => deliveries.length >= 1, 10_000, 'first delivery');
    const jsm = await jetstream(nc).jetstreamManager();
    await waitFor(
      async () => {
        const info = await jsm.consumers.info(`sb_${bus.instance}_commands`, 'slow');
        return info.num_ack_pending === 0 && info.delivered.consumer_seq >= 1;
      },
      10_000,
      'acknowledged',
    );
    await c.stop();
    expect(deliveries).toEqual([1]);
  });

  it('hands a malformed message to onMalformed before terminating it, and retries when that fails', async () => {
    const bus = await createBus(nc, instanceId(uniqueInstanceId('bus')));
    await bus.ensureStreams();
    const kept: string[] = [];
    let failOnce = true;
    const c = await bus.consume(
      defineConsumer({ durable: 'malformed', message: job, ackWaitSeconds: 30, maxAckPending: 4 }),
      async () => undefined,
      {
        retryDelayMs: () => 50,
        onError: () => undefined,
        onMalformed: async (data, err: BusValidationError) => {
          if (failOnce) {
            failOnce = false;
            throw new Error('database down');
          }
          kept.push(`${new TextDecoder().decode(data)} ${err.direction}`);
        },
      },
    );
    await jetstream(nc).publish(job.subject(bus.instance), 'not json at all');
    await waitFor(async () => kept.length === 1, 10_000, 'kept after one retry');
    await c.stop();
    expect(kept).toEqual(['not json at all consume']);
  });
});

describe('serve: unexpected failures', () => {
  it('are reported in the serving process with the operation name and answered as internal_error', async () => {
    const reported: Array<{ operation: string; message: string }> = [];
    const bus = await createBus(nc, instanceId(uniqueInstanceId('bus')), {
      onServeError: (err, at) =>
        reported.push({ operation: at.operation, message: err instanceof Error ? err.message : String(err) }),
    });
    const sub = bus.serve(echo, async ({ fail }) => {
      if (fail === 'bug') throw new Error('relation "chats" does not exist');
      if (fail === 'rpc') throw new ServiceError('not_found', 'nothing here');
      return { ok: true };
    });
    const bug = await bus.request(echo, { fail: 'bug' }).catch((e: unknown) => e);
    expect(bug).toBeInstanceOf(ServiceError);
    expect(bug).toMatchObject({ code: 'internal_error', status: 500 });
    // An expected, typed error is the caller's business, not a failure of the service.
    const typed = await bus.request(echo, { fail: 'rpc' }).catch((e: unknown) => e);
    expect(typed).toMatchObject({ code: 'not_found', status: 404 });
    expect(reported).toEqual([{ operation: 'test.echo', message: 'relation "chats" does not exist' }]);

    // The gateway answers 500 internal_error for it, not a misleading 503.
    const viaGateway = await callService(bus, echo, { fail: 'bug' }).catch((e: unknown) => e);
    expect(viaGateway).toBeInstanceOf(ServiceError);
    expect(viaGateway).toMatchObject({ status: 500, code: 'internal_error' });
    sub.unsubscribe();

    // Nobody serving at all is the one case for 503.
    const down = await callService(bus, echo, { fail: 'no' }).catch((e: unknown) => e);
    expect(down).toMatchObject({ status: 503, code: 'service_unavailable' });
  });

  it('a request with a retry key always carries one, and an unknown outcome answers it', async () => {
    const bus = await createBus(nc, instanceId(uniqueInstanceId('bus')));
    const seen: string[] = [];
    const sub = bus.serve(keyed, async (r) => {
      seen.push(r.idempotency_key ?? '');
      return { key: r.idempotency_key ?? '' };
    });
    const given = await callService(bus, keyed, { text: 'a', idempotency_key: 'client-key' });
    const made = await callService(bus, keyed, { text: 'b' });
    expect(given.key).toBe('client-key');
    expect(made.key).toMatch(/^[0-9a-f-]{36}$/);
    sub.unsubscribe();
    const unknown = await callService(bus, keyed, { text: 'c' }).catch((e: unknown) => e);
    expect(unknown).toMatchObject({ status: 503, code: 'service_unavailable' });
    const key = (unknown as ServiceError).details?.idempotency_key;
    expect(typeof key).toBe('string');
    expect(seen).toEqual(['client-key', made.key]);
  });
});
