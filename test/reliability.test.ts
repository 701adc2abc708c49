import { connect, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { connectNats, type NatsConnection } from '@switchboard/kit';
import {
  type InboundDeadLetter,
  instanceId,
  listInboundDeadLetters,
  messagesWebhookBody,
  networkEvent,
  redriveInboundDeadLetter,
} from '@switchboard/proto';
import { type Bus, createBus } from '@switchboard/proto/bus';
import {
  admin as adminPrincipal,
  repoRoot,
  spawnService,
  startReceiver,
  testNatsUrl,
  waitFor,
} from '@switchboard/testkit';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiMessage, chatMessage, chatMessages, json } from './support/api.ts';
import { type Inbox, startInbox } from './support/inbox.ts';

/**
 * "A 200 to the network is a promise": bodies are retried through outages and never dropped,
 * bodies that can never be stored are kept as dead letters without stalling the others, and
 * sends survive crashes, keep their order per customer and never go out twice.
 *
 * chats runs behind a TCP proxy to PostgreSQL, so a test can take its database away (refuse
 * connections) or stall it (hold the bytes) while the gateway and the fan-out keep theirs.
 */

// ---- a TCP proxy in front of PostgreSQL, for chats only ----

interface PgProxy {
  url: string;
  /** Refuse new connections and cut the open ones: the database is gone. */
  down(): Promise<void>;
  up(): Promise<void>;
  /** Hold every byte in both directions: queries hang until `resume`. */
  pause(): void;
  resume(): void;
  close(): Promise<void>;
}

async function startPgProxy(databaseUrl: string): Promise<PgProxy> {
  const target = new URL(databaseUrl);
  const sockets = new Set<Socket>();
  let paused = false;
  const held: Array<() => void> = [];
  const pipe = (from: Socket, to: Socket) =>
    from.on('data', (chunk: Buffer) => {
      if (paused) held.push(() => to.write(chunk));
      else to.write(chunk);
    });
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => {
        sockets.delete(s);
        client.destroy();
        upstream.destroy();
      });
    }
    pipe(client, upstream);
    pipe(upstream, client);
  });
  const listen = () => new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  let port = 0;
  await listen();
  const addr = server.address();
  if (!addr || typeof addr === 'string') throw new Error('proxy has no port');
  port = addr.port;
  const url = new URL(databaseUrl);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  const resume = () => {
    paused = false;
    for (const write of held.splice(0)) write();
  };
  return {
    url: url.toString(),
    async down() {
      const closed = new Promise<void>((r) => server.close(() => r()));
      for (const s of sockets) s.destroy();
      await closed;
    },
    up: listen,
    pause() {
      paused = true;
    },
    resume,
    async close() {
      resume();
      for (const s of sockets) s.destroy();
      if (server.listening) await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

// ---- the inbox ----

/** Bodies naming this customer fail with a data exception (test hook), so they are dead-lettered. */
const POISON = '491799000001';
/** Bodies naming this customer fail with a serialization failure (test hook): retried, never dropped. */
const FLAKY = '491799000002';
const HOOK = `${POISON}:22023,${FLAKY}:40001`;

let inbox: Inbox;
let proxy: PgProxy;
let admin: string;
let nc: NatsConnection;
let bus: Bus;
let sql: pg.Client;

const chatsEntry = join(repoRoot, 'services/chats/src/main.ts');

/** Starts chats (after stopping the running one) behind the proxy, with or without the test hook. */
async function restartChats(opts: { hook: boolean; signal?: NodeJS.Signals }): Promise<void> {
  await inbox.chats.stop(opts.signal ?? 'SIGTERM');
  const { CHATS_TEST_FAIL_WA_IDS: _hook, ...env } = inbox.env;
  inbox.chats = spawnService(chatsEntry, {
    ...env,
    DATABASE_URL: proxy.url,
    ...(opts.hook && { CHATS_TEST_FAIL_WA_IDS: HOOK }),
  });
  await waitFor(
    async () => {
      await bus.request(listInboundDeadLetters, { limit: 1, offset: 0 }, { timeoutMs: 1_000 });
      return true;
    },
    30_000,
    () => `chats answering (${inbox.chats.output()})`,
  );
}

beforeAll(async () => {
  inbox = await startInbox({ fanout: true, env: { CHATS_TEST_FAIL_WA_IDS: HOOK } });
  proxy = await startPgProxy(inbox.db.url);
  nc = await connectNats(testNatsUrl(), 'reliability-test');
  bus = await createBus(nc, instanceId(inbox.env.INSTANCE_ID ?? ''));
  sql = new pg.Client({ connectionString: inbox.db.url });
  await sql.connect();
  await restartChats({ hook: true });
  admin = await inbox.login();
});

afterAll(async () => {
  await inbox?.chats.stop();
  await sql?.end();
  await nc?.drain();
  await proxy?.close();
  await inbox?.stop();
});

// ---- helpers ----

const NUMBER = { wabaId: 'waba', displayPhoneNumber: '1', phoneNumberId: '1' };
const now = () => String(Math.floor(Date.now() / 1000));

const textBody = (waId: string, wamid: string, text: string) =>
  JSON.stringify(
    messagesWebhookBody(NUMBER, {
      contacts: [{ profile: { name: 'Customer' }, wa_id: waId }],
      messages: [{ from: waId, id: wamid, timestamp: now(), type: 'text', text: { body: text } }],
    }),
  );

const messagesOf = (waId: string) => chatMessages(inbox, waId, admin);
const messageOf = (waId: string, id: string) => chatMessage(inbox, waId, admin, id);

async function deadLetters(): Promise<InboundDeadLetter[]> {
  const out: InboundDeadLetter[] = [];
  for (let offset = 0; ; offset += 100) {
    const page = await bus.request(listInboundDeadLetters, { limit: 100, offset });
    out.push(...page.results);
    if (out.length >= page.count || !page.results.length) return out;
  }
}

async function received(waId: string): Promise<Array<{ message: { text?: { body: string } } }>> {
  const res = await fetch(`${inbox.sandbox.url}/sandbox/customers/${waId}/received`);
  return (await json<{ messages: Array<{ message: { text?: { body: string } } }> }>(res)).messages;
}

async function faults(method: 'POST' | 'DELETE' | 'GET', body?: unknown): Promise<number> {
  const res = await fetch(`${inbox.sandbox.url}/sandbox/faults`, {
    method,
    ...(body !== undefined && {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }),
  });
  const list = await json<{ faults: Array<{ remaining: number }> }>(res);
  return list.faults.reduce((n, f) => n + f.remaining, 0);
}

const send = (waId: string, text: string, headers: Record<string, string> = {}) =>
  inbox.api('POST', '/api/v1/messages/', {
    token: admin,
    headers,
    body: { wa_id: waId, type: 'text', text: { body: text } },
  });

async function customerWrites(waId: string): Promise<void> {
  await inbox.customerSays(waId, { type: 'text', text: { body: 'hello' } });
  await waitFor(async () => (await messagesOf(waId)).length >= 1, 20_000, `${waId} wrote`);
}

/** A fixed stretch of a scenario (how long an outage lasts), not a wait for something to happen. */
const lasting = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---- inbound ----

describe('inbound bodies are never dropped', () => {
  it('a customer text containing U+0000 is stored, listed and fanned out with its original bytes', async () => {
    const hook = await startReceiver(() => ({ status: 204 }));
    const created = await inbox.api('POST', '/api/v1/webhooks/waba/', {
      token: admin,
      body: { url: hook.url },
    });
    expect(created.status).toBe(201);
    const webhookId = (await json<{ id: string | number }>(created)).id;
    const waId = '491799000010';
    const sent = await inbox.customerSays(waId, { type: 'text', text: { body: 'before\u0000after' } });
    await waitFor(async () => (await messagesOf(waId)).length === 1, 20_000, 'NUL text stored');
    // Text and jsonb columns hold U+FFFD in its place.
    expect((await messagesOf(waId))[0]?.waba_payload.text?.body).toBe('before\uFFFDafter');
    // The fan-out repeats the network's bytes, escape included.
    await waitFor(async () => hook.requests.some((r) => r.body.includes(sent.id)), 30_000, 'fanned out');
    const delivered = hook.requests.find((r) => r.body.includes(sent.id))?.body ?? '';
    expect(delivered).toContain('before\\u0000after');
    // The raw bytes are kept next to the jsonb copy.
    const row = await sql.query<{ raw: Buffer }>(
      `select body_raw as raw from network_webhooks where body_raw is not null and position($1 in convert_from(body_raw, 'UTF8')) > 0`,
      [sent.id],
    );
    expect(row.rows[0]?.raw.toString('utf8')).toContain('before\\u0000after');
    await inbox.api('DELETE', `/api/v1/webhooks/waba/${webhookId}/`, { token: admin });
    await hook.close();
  });

  it('bodies that can never be stored are dead-lettered at once and never stall the healthy ones', async () => {
    // 70 bodies that fail with a data exception, 70 that fail transiently, then 10 healthy ones.
    const posts: Array<Promise<Response>> = [];
    for (let i = 0; i < 70; i++)
      posts.push(inbox.networkPost(textBody(POISON, `wamid.poison.${i}`, `poison ${i}`)));
    for (let i = 0; i < 70; i++)
      posts.push(inbox.networkPost(textBody(FLAKY, `wamid.flaky.${i}`, `flaky ${i}`)));
    expect((await Promise.all(posts)).map((r) => r.status)).toEqual(new Array(140).fill(200));
    const healthy = Array.from({ length: 10 }, (_, i) => `49179900010${i}`);
    const started = Date.now();
    for (const [i, waId] of healthy.entries()) {
      expect((await inbox.networkPost(textBody(waId, `wamid.healthy.${i}`, `healthy ${i}`))).status).toBe(
        200,
      );
    }
    await waitFor(
      async () => (await Promise.all(healthy.map(messagesOf))).every((m) => m.length === 1),
      20_000,
      'the 10 healthy bodies stored',
    );
    expect(Date.now() - started).toBeLessThan(20_000);

    await waitFor(
      async () => (await deadLetters()).filter((d) => d.wa_ids.includes(POISON)).length === 70,
      20_000,
      'the 70 poison bodies dead-lettered',
    );
    const poison = (await deadLetters()).filter((d) => d.wa_ids.includes(POISON));
    expect(poison[0]).toMatchObject({ error_code: '22023', redrivable: true, redriven_at: null });
    expect(poison[0]?.body).toContain('"from":"491799000001"');
    // As the API answers them: a page like every list (a limit past the maximum is clamped),
    // times in POSIX seconds.
    const listed = await inbox.api('GET', '/api/v1/waba/dead_letters/?redriven=false&limit=100000', {
      token: admin,
    });
    expect(listed.status).toBe(200);
    const page = await json<{ count: number; next: string | null; results: InboundDeadLetter[] }>(listed);
    expect(page.results).toHaveLength(Math.min(page.count, 100));
    const nowSeconds = Math.floor(Date.now() / 1000);
    for (const d of page.results) {
      expect(Number.isInteger(d.received_at) && Number.isInteger(d.created_at)).toBe(true);
      expect(nowSeconds - d.received_at).toBeLessThan(120);
      expect(nowSeconds - d.created_at).toBeLessThan(120);
      expect(d.created_at).toBeGreaterThanOrEqual(d.received_at);
    }
    // Transient failures are retried, never dead-lettered.
    expect((await deadLetters()).filter((d) => d.wa_ids.includes(FLAKY))).toEqual([]);
    // Visible in the event log too.
    const log = await json<{
      count: number;
      results: Array<{ target_type: string; target_id: string; details: { wa_ids: string[] } }>;
    }>(
      await inbox.api('GET', '/api/v1/audit_logs/?action=inbound.dead_lettered&limit=100', { token: admin }),
    );
    expect(log.count).toBe(70);
    expect(log.results[0]).toMatchObject({ target_type: 'inbound', details: { wa_ids: [POISON] } });
    expect(poison.map((d) => String(d.id))).toContain(log.results[0]?.target_id);
  });

  it('after the fix, a re-driven dead letter is stored, once, however often it is re-driven', async () => {
    const [letter] = (await deadLetters()).filter((d) => d.wa_ids.includes(POISON));
    if (!letter) throw new Error('no dead letter');
    const wamid = /"id":"(wamid\.poison\.\d+)"/.exec(letter.body)?.[1];
    // The fix ships: chats restarts without the fault.
    await restartChats({ hook: false });
    const first = await bus.request(redriveInboundDeadLetter, { principal: adminPrincipal, id: letter.id });
    expect(Number.isInteger(first.redriven_at)).toBe(true);
    expect(Math.abs((first.redriven_at ?? 0) - Math.floor(Date.now() / 1000))).toBeLessThanOrEqual(5);
    await waitFor(
      async () => (await messagesOf(POISON)).some((m) => m.wamid === wamid),
      20_000,
      're-driven body stored',
    );
    const again = await bus.request(redriveInboundDeadLetter, { principal: adminPrincipal, id: letter.id });
    expect(again.redriven_at).toBe(first.redriven_at);
    const copies = await sql.query<{ n: string }>(
      `select count(*) as n from network_webhooks where convert_from(body_raw, 'UTF8') = $1`,
      [letter.body],
    );
    expect(Number(copies.rows[0]?.n)).toBe(1);
    const agent = { ...adminPrincipal, user_id: 2, role: 'user' as const };
    await expect(
      bus.request(redriveInboundDeadLetter, { principal: agent, id: letter.id }),
    ).rejects.toMatchObject({
      status: 403,
    });

    // The transient ones were retried all along and pass now that the fault is gone.
    await waitFor(
      async () => (await messagesOf(FLAKY)).length === 70,
      60_000,
      'all 70 retried bodies stored',
    );
    expect((await deadLetters()).filter((d) => d.wa_ids.includes(FLAKY))).toEqual([]);
  });

  it('bodies received while PostgreSQL is unreachable are stored when it is back, none dead-lettered', async () => {
    const waId = '491799000020';
    const before = (await deadLetters()).length;
    await proxy.down();
    try {
      for (let i = 0; i < 10; i++) {
        expect((await inbox.networkPost(textBody(waId, `wamid.outage.${i}`, `outage ${i}`))).status).toBe(
          200,
        );
      }
      // Longer than the few attempts an unknown failure gets: a refused connection must be
      // recognised as transient, or these bodies would be dead-lettered during the outage.
      await lasting(12_000);
    } finally {
      await proxy.up();
    }
    await waitFor(
      async () => (await messagesOf(waId)).length === 10,
      60_000,
      'all 10 stored after the outage',
    );
    expect((await deadLetters()).length).toBe(before);
  });
});

describe('inbound order per customer', () => {
  it('bodies of one customer that failed during an outage are fanned out in the order received', async () => {
    const waId = '491799000030';
    const published: string[] = [];
    const sub = nc.subscribe(networkEvent.subject(bus.instance), {
      callback: (_err, msg) => {
        const event = msg.json<{ wa_ids: string[]; body: string }>();
        if (!event.wa_ids.includes(waId)) return;
        const body = JSON.parse(event.body) as {
          entry: { changes: { value: { messages?: { id: string }[] } }[] }[];
        };
        const id = body.entry[0]?.changes[0]?.value.messages?.[0]?.id;
        if (id && !published.includes(id)) published.push(id);
      },
    });
    const wamids = Array.from({ length: 8 }, (_, i) => `wamid.order.${i}`);
    await proxy.down();
    try {
      for (const [i, wamid] of wamids.entries()) {
        expect((await inbox.networkPost(textBody(waId, wamid, `in order ${i}`))).status).toBe(200);
      }
      // Every body fails and is retried at least once (the first retry comes after 0.5 s ± 20 %).
      await lasting(3_000);
    } finally {
      await proxy.up();
    }
    try {
      await waitFor(async () => published.length >= wamids.length, 60_000, 'all 8 fanned out');
      expect(published).toEqual(wamids);
    } finally {
      sub.unsubscribe();
    }
  });
});

// ---- sending ----

describe('sends', () => {
  it('the same Idempotency-Key with a different message is refused with 422', async () => {
    const waId = '491799000030';
    await customerWrites(waId);
    const first = await send(waId, 'one', { 'idempotency-key': 'reuse-1' });
    expect(first.status).toBe(202);
    const same = await send(waId, 'one', { 'idempotency-key': 'reuse-1' });
    expect(same.status).toBe(202);
    expect((await json<ApiMessage>(same)).id).toBe((await json<ApiMessage>(first)).id);
    const other = await send(waId, 'two', { 'idempotency-key': 'reuse-1' });
    expect(other.status).toBe(422);
    expect(await other.json()).toMatchObject({ code: 'idempotency_key_reused' });
  });

  it('a send whose outcome is unknown answers 503 with a key; retrying with it sends once', async () => {
    const waId = '491799000031';
    await customerWrites(waId);
    // chats has warm connections, so the send's queries stall on one instead of failing to connect.
    await Promise.all([1, 2, 3, 4].map(() => messagesOf(waId)));
    proxy.pause();
    let unknown: Response;
    try {
      unknown = await send(waId, 'stalled');
    } finally {
      proxy.resume();
    }
    expect(unknown.status).toBe(503);
    const body = await json<{ code: string; idempotency_key?: string }>(unknown);
    expect(body.code).toBe('service_unavailable');
    expect(body.idempotency_key).toMatch(/^[0-9a-f-]{36}$/);
    const retry = await send(waId, 'stalled', { 'idempotency-key': body.idempotency_key ?? '' });
    expect(retry.status).toBe(202);
    const id = (await json<ApiMessage>(retry)).id;
    await waitFor(async () => Boolean((await messageOf(waId, id))?.wamid), 20_000, 'sent');
    expect((await messagesOf(waId)).filter((m) => m.from_us)).toHaveLength(1);
    expect((await received(waId)).map((r) => r.message.text?.body)).toEqual(['stalled']);
  });

  it('a send in flight when chats crashes goes out within 15 s of the crash (or 10 s of chats being back), once', async () => {
    const waId = '491799000032';
    await customerWrites(waId);
    // The network fails every call: the send stays in the network client's retries.
    await faults('POST', { count: 1_000, status: 503 });
    const res = await send(waId, 'through the crash');
    expect(res.status).toBe(202);
    const id = (await json<ApiMessage>(res)).id;
    await waitFor(async () => (await faults('GET')) < 1_000, 20_000, 'first network attempt');
    const crashedAt = Date.now();
    await restartChats({ hook: false, signal: 'SIGKILL' });
    await faults('DELETE');
    // The dead process's command comes back after its AckWait (10 s) and its lease runs out:
    // 15 s after the crash, or soon after chats is back when starting it took longer than that
    // (seen under the whole suite's load: the restart alone took over 18 s).
    const deadline = Math.max(crashedAt + 15_000, Date.now() + 10_000);
    await waitFor(
      async () => Boolean((await messageOf(waId, id))?.wamid),
      deadline - Date.now(),
      'sent after the crash',
    );
    expect((await received(waId)).map((r) => r.message.text?.body)).toEqual(['through the crash']);
  });

  it('sends to one customer reach the network in accept order through failures; others are not held', async () => {
    const slow = '491799000033';
    const other = '491799000034';
    await customerWrites(slow);
    await customerWrites(other);
    // As many consecutive failures as the network client tries by itself: the first send
    // fails its attempt and waits for a redelivery; every later send to the same customer
    // must wait for it.
    await faults('POST', { count: 5, status: 503 });
    const texts = ['m1', 'm2', 'm3', 'm4', 'm5'];
    for (const t of texts) expect((await send(slow, t)).status).toBe(202);
    await waitFor(async () => (await faults('GET')) === 0, 30_000, 'the first send failed its attempt');
    const otherRes = await send(other, 'not held');
    expect(otherRes.status).toBe(202);
    const otherId = (await json<ApiMessage>(otherRes)).id;
    await waitFor(
      async () => Boolean((await messageOf(other, otherId))?.wamid),
      5_000,
      'the other customer’s send',
    );
    // The other customer did not wait for the held one's five.
    expect((await received(slow)).length).toBeLessThan(texts.length);
    await waitFor(async () => (await received(slow)).length === texts.length, 60_000, 'all five sent');
    expect((await received(slow)).map((r) => r.message.text?.body)).toEqual(texts);
  });
});
