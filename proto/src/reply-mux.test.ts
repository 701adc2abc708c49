import { connectNats, type NatsConnection } from '@switchboard/kit';
import { testNatsUrl } from '@switchboard/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { classifyFailure } from './failures.ts';
import { createReplyMux } from './reply-mux.ts';

let nc: NatsConnection;
beforeAll(async () => {
  nc = await connectNats(testNatsUrl(), 'reply-mux-test');
});
afterAll(async () => {
  await nc.drain();
});

const text = new TextEncoder();
const read = (d: Uint8Array) => new TextDecoder().decode(d);

describe('createReplyMux', () => {
  it('answers many requests in flight each with its own reply', async () => {
    const sub = nc.subscribe('mux.echo', {
      callback: (_e, m) => {
        m.respond(text.encode(`re: ${read(m.data)}`));
      },
    });
    const mux = createReplyMux(nc);
    const replies = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        mux.request('mux.echo', text.encode(String(i)), { timeoutMs: 2_000 }),
      ),
    );
    expect(replies.map((r) => read(r.data))).toEqual(Array.from({ length: 50 }, (_, i) => `re: ${i}`));
    sub.unsubscribe();
  });

  it('fails fast with the client’s NoResponders when nobody listens, a transient failure', async () => {
    const mux = createReplyMux(nc);
    const err = await mux
      .request('mux.nobody', text.encode('x'), { timeoutMs: 5_000 })
      .catch((e: unknown) => e);
    expect((err as Error).name).toBe('NoResponders');
    expect(classifyFailure(err).class).toBe('transient');
  });

  it('times out with the client’s TimeoutError when a listener never answers', async () => {
    const sub = nc.subscribe('mux.silent', { callback: () => undefined });
    await nc.flush();
    const mux = createReplyMux(nc);
    const started = Date.now();
    const err = await mux
      .request('mux.silent', text.encode('x'), { timeoutMs: 300 })
      .catch((e: unknown) => e);
    expect((err as Error).name).toBe('TimeoutError');
    expect(classifyFailure(err).class).toBe('transient');
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    sub.unsubscribe();
  });
});
