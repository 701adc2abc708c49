import { jetstream } from '@nats-io/jetstream';
import { headers as natsHeaders } from '@nats-io/nats-core';
import { connectNats, type NatsConnection } from '@switchboard/kit';
import { testNatsUrl, uniqueInstanceId, waitFor } from '@switchboard/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type Bus, createBus, createRawPublisher } from './bus.ts';
import { defineConsumer, defineRpc, defineStream } from './contracts.ts';
import { BusValidationError, ServiceError } from './errors.ts';
import { instanceId } from './instance.ts';
import { streamName } from './streams.ts';
import { subjects } from './subjects.ts';

const Greeting = z.object({ id: z.string(), text: z.string().min(1) });
const greeting = defineStream({
  name: 'test.greeting',
  stream: 'commands',
  subject: (i) => subjects.command(i, 'greeting'),
  schema: Greeting,
});
const greetingConsumer = (durable: string) =>
  defineConsumer({ durable, message: greeting, ackWaitSeconds: 5, maxAckPending: 8, maxDeliver: 3 });

const add = defineRpc({
  name: 'test.add',
  subject: (i) => subjects.rpc(i, 'calc', 'add'),
  request: z.object({ a: z.number(), b: z.number() }),
  response: z.object({ sum: z.number() }),
});

let nc: NatsConnection;
beforeAll(async () => {
  nc = await connectNats(testNatsUrl(), 'bus-test');
});
afterAll(async () => {
  await nc.drain();
});

async function newBus(): Promise<Bus> {
  const bus = await createBus(nc, instanceId(uniqueInstanceId()));
  await bus.ensureStreams();
  return bus;
}

describe('bus publish and consume', () => {
  it('delivers a valid message to the handler once, de-duplicating by idempotency key', async () => {
    const bus = await newBus();
    const seen: string[] = [];
    const c = await bus.consume(greetingConsumer('greeter'), async (msg) => {
      seen.push(msg.id);
      return undefined;
    });
    const first = await bus.publish(greeting, { id: 'a', text: 'hi' }, { idempotencyKey: 'k1' });
    const again = await bus.publish(greeting, { id: 'a', text: 'hi' }, { idempotencyKey: 'k1' });
    expect(first.duplicate).toBe(false);
    expect(again.duplicate).toBe(true);
    await bus.publish(greeting, { id: 'b', text: 'there' });
    await waitFor(async () => seen.length >= 2, 10_000, 'two deliveries');
    await c.stop();
    expect(seen).toEqual(['a', 'b']);
  });

  it('fails a publish the stream refuses, and a raw publish alike', async () => {
    const bus = await newBus();
    // JetStream answers with an error in place of an acknowledgement when the expected stream
    // does not match: the publish must fail, not resolve with a sequence it never got.
    await expect(
      bus.publish(greeting, { id: 'x', text: 'hi' }, { headers: { 'Nats-Expected-Stream': 'another' } }),
    ).rejects.toThrow(/stream/i);
    const h = natsHeaders();
    h.set('Nats-Expected-Stream', 'another');
    const raw = createRawPublisher(nc);
    const subject = greeting.subject(bus.instance);
    await expect(raw(subject, new TextEncoder().encode('{}'), h)).rejects.toThrow(/stream/i);
    const ack = await raw(subject, new TextEncoder().encode(JSON.stringify({ id: 'y', text: 'hi' })));
    expect(ack.seq).toBeGreaterThan(0);
  });

  it('refuses to publish a payload that breaks its schema', async () => {
    const bus = await newBus();
    const bad = { id: 'x', text: '' } as z.input<typeof Greeting>;
    const err = await bus.publish(greeting, bad).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BusValidationError);
    expect((err as BusValidationError).code).toBe('bus_validation_failed');
    expect((err as BusValidationError).direction).toBe('publish');
  });

  it('terminates a malformed message on the wire without calling the handler', async () => {
    const bus = await newBus();
    const handled: unknown[] = [];
    const rejected: unknown[] = [];
    const c = await bus.consume(
      greetingConsumer('strict'),
      async (msg) => {
        handled.push(msg);
        return undefined;
      },
      { onError: (err) => rejected.push(err) },
    );
    // Bypass the typed client, as a buggy or foreign publisher would.
    await jetstream(nc).publish(greeting.subject(bus.instance), JSON.stringify({ id: 1 }));
    await jetstream(nc).publish(greeting.subject(bus.instance), 'not json');
    await bus.publish(greeting, { id: 'ok', text: 'valid' });
    await waitFor(
      async () => handled.length === 1 && rejected.length === 2,
      10_000,
      'valid handled, invalid rejected',
    );
    await c.stop();
    expect(rejected.every((e) => e instanceof BusValidationError && e.direction === 'consume')).toBe(true);
    expect(handled).toEqual([{ id: 'ok', text: 'valid' }]);
    // Terminated, not pending for redelivery.
    const jsm = await jetstream(nc).jetstreamManager();
    await waitFor(
      async () => {
        const info = await jsm.consumers.info(streamName(bus.instance, 'commands'), 'strict');
        return info.num_ack_pending === 0 && info.num_pending === 0 && info.num_redelivered === 0;
      },
      10_000,
      'nothing pending or redelivered',
    );
  });

  it('redelivers after a handler error and honours a handler nak delay', async () => {
    const bus = await newBus();
    const attempts: number[] = [];
    const c = await bus.consume(
      greetingConsumer('flaky'),
      async (_msg, ctx) => {
        attempts.push(ctx.deliveryCount);
        if (ctx.deliveryCount === 1) throw new Error('transient');
        if (ctx.deliveryCount === 2) return { kind: 'nak', delayMs: 200 };
        return undefined;
      },
      { retryDelayMs: () => 50, onError: () => undefined },
    );
    await bus.publish(greeting, { id: 'f', text: 'retry me' });
    await waitFor(async () => attempts.length === 3, 10_000, 'three attempts');
    await c.stop();
    expect(attempts).toEqual([1, 2, 3]);
  });
});

describe('bus durables', () => {
  it('creates a durable from a stream sequence or a time, races to create it once, and deletes it', async () => {
    const bus = await newBus();
    for (const id of ['a', 'b', 'c']) await bus.publish(greeting, { id, text: 'x' });
    const third = await bus.publish(greeting, { id: 'd', text: 'x' });
    const fromSeq = greetingConsumer('from-seq');
    // Two processes creating it at once, each from its own start: one wins, neither fails.
    await Promise.all([
      bus.ensureConsumer(fromSeq, { startAt: { seq: third.seq } }),
      bus.ensureConsumer(fromSeq, { startAt: { time: new Date() } }),
    ]);
    const seen: string[] = [];
    const c = await bus.consume(fromSeq, async (msg) => {
      seen.push(msg.id);
      return undefined;
    });
    await bus.publish(greeting, { id: 'e', text: 'x' });
    await waitFor(async () => seen.includes('e'), 10_000, 'the message after the start');
    await c.stop();
    // Whichever start won, nothing before the fourth message.
    expect(seen.filter((id) => ['a', 'b', 'c'].includes(id))).toEqual([]);

    const fromNow = greetingConsumer('from-now');
    const later: string[] = [];
    const c2 = await bus.consume(
      fromNow,
      async (msg) => {
        later.push(msg.id);
        return undefined;
      },
      { startAt: { time: new Date() } },
    );
    await bus.publish(greeting, { id: 'f', text: 'x' });
    await waitFor(async () => later.includes('f'), 10_000, 'the message after the start time');
    await c2.stop();
    expect(later).toEqual(['f']);

    await bus.deleteConsumer(fromNow);
    await bus.deleteConsumer(fromNow);
    // Made again without a start: from the stream's first message.
    const all: string[] = [];
    const c3 = await bus.consume(fromNow, async (msg) => {
      all.push(msg.id);
      return undefined;
    });
    await waitFor(async () => all.length >= 6, 10_000, 'every message again');
    await c3.stop();
    expect(all).toEqual(['a', 'b', 'c', 'd', 'e', 'f']);
  });
});

describe('bus subscribe', () => {
  it('hands each published message to the listener, parsed, and an unreadable one as null', async () => {
    const bus = await newBus();
    const seen: Array<z.output<typeof greeting.schema> | null> = [];
    const sub = bus.subscribe(greeting, (g) => seen.push(g));
    await nc.flush();
    await bus.publish(greeting, { id: 'g1', text: 'Hello Ana' });
    nc.publish(greeting.subject(bus.instance), 'not json');
    await waitFor(async () => seen.length === 2, 5_000, 'two notifications');
    expect(seen).toEqual([{ id: 'g1', text: 'Hello Ana' }, null]);
    sub.unsubscribe();
  });
});

describe('bus request/reply', () => {
  it('returns a typed reply and a typed error envelope', async () => {
    const bus = await newBus();
    const sub = bus.serve(add, async ({ a, b }) => {
      if (a < 0) throw ServiceError.validation({ a: ['a must not be negative'] });
      return { sum: a + b };
    });
    expect(await bus.request(add, { a: 2, b: 3 })).toEqual({ sum: 5 });
    const typed = await bus.request(add, { a: -1, b: 3 }).catch((e: unknown) => e);
    expect(typed).toBeInstanceOf(ServiceError);
    expect(typed).toMatchObject({
      code: 'validation_error',
      status: 400,
      fields: { a: ['a must not be negative'] },
    });
    expect((typed as ServiceError).cause).toBeInstanceOf(Error);
    // A request that fails the schema never reaches the handler.
    const raw = await nc.request(add.subject(bus.instance), JSON.stringify({ a: 'two' }));
    expect(raw.headers?.get('Nats-Service-Error-Code')).toBe('500');
    sub.unsubscribe();
  });
});

describe('instance isolation', () => {
  it('keeps two instances on one server apart: streams, consumers and request subjects', async () => {
    const one = await newBus();
    const two = await newBus();
    const seenByOne: string[] = [];
    const seenByTwo: string[] = [];
    const c1 = await one.consume(greetingConsumer('greeter'), async (m) => {
      seenByOne.push(m.id);
      return undefined;
    });
    const c2 = await two.consume(greetingConsumer('greeter'), async (m) => {
      seenByTwo.push(m.id);
      return undefined;
    });
    await one.publish(greeting, { id: 'for-one', text: '1' });
    await two.publish(greeting, { id: 'for-two', text: '2' });
    await waitFor(async () => seenByOne.length === 1 && seenByTwo.length === 1, 10_000, 'both delivered');
    // A late message would show up during this second publish round trip if routing leaked.
    await one.publish(greeting, { id: 'one-again', text: '1' });
    await waitFor(async () => seenByOne.length === 2, 10_000, 'second delivery');
    await c1.stop();
    await c2.stop();
    expect(seenByOne).toEqual(['for-one', 'one-again']);
    expect(seenByTwo).toEqual(['for-two']);
    expect(streamName(one.instance, 'commands')).not.toBe(streamName(two.instance, 'commands'));

    const sub = one.serve(add, async ({ a, b }) => ({ sum: a + b }));
    const err = await two.request(add, { a: 1, b: 1 }, { timeoutMs: 500 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(await one.request(add, { a: 1, b: 1 })).toEqual({ sum: 2 });
    sub.unsubscribe();
  });
});
