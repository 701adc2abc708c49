/**
 * What one request costs each process, for comparing two checkouts: one phase of
 * `bench:messaging` alone, long enough for the CPU times in /proc to be read with a few per
 * cent of noise, with nothing else in the run.
 *
 *   node bench/messaging/per-request.ts --phase ingest [--requests 6000] [--concurrency 32] [--rounds 2]
 *   node bench/messaging/per-request.ts --phase send [--requests 2000] [--concurrency 32|1]
 *
 * `ingest`: signed network webhooks (a customer message each, 200 customers), until every body
 * is committed (its event is out). `send`: `POST /api/v1/messages/` to 200 customers who wrote
 * first, the sandbox posting `sent`, `delivered` and `read` back 50, 100 and 150 ms after each,
 * until 1.5 s after the last answer. Per round: the rate, p50/p99, and the CPU per request of the
 * gateway, chats, nats-server, PostgreSQL (with its backends) and this process (the client and
 * the sandbox). Machines here drift by tens of per cent within an hour: compare two checkouts by
 * running each in turn, several times.
 */
import { parseArgs } from 'node:util';
import { connectNats } from '@switchboard/kit';
import { instanceId, networkEvent } from '@switchboard/proto';
import { sandboxSettings, startSandbox } from '@switchboard/sandbox';
import { startLocalInfra } from '@switchboard/testkit/infra';
import { waitFor } from '@switchboard/testkit/tools';
import { Pool } from 'undici';
import { z } from 'zod';
import { startBenchInbox } from '../inbox-processes.ts';
import { cpuPerRequest } from '../process-cpu.ts';
import { runConcurrent, summary } from './stats.ts';
import { CUSTOMERS, customer, customerWebhook, inboxCpuReader, signedBy } from './workload.ts';

const args = parseArgs({
  options: {
    phase: { type: 'string' },
    requests: { type: 'string' },
    concurrency: { type: 'string', default: '32' },
    rounds: { type: 'string', default: '2' },
  },
}).values;
const phase = z.enum(['ingest', 'send']).parse(args.phase);
const N = Number(args.requests ?? (phase === 'ingest' ? 6000 : 2000));
const C = Number(args.concurrency);
const ROUNDS = Number(args.rounds);

const infra = await startLocalInfra();
const databaseUrl = await infra.createDatabase('bench_per_request');
const sandbox = await startSandbox({
  settings: sandboxSettings({ behaviour: { statusDelaysMs: { sent: 50, delivered: 100, read: 150 } } }),
});
const seed = sandbox.seed;
if (!seed) throw new Error('no sandbox seed');
const inbox = await startBenchInbox({ natsUrl: infra.natsUrl, databaseUrl, sandbox });
const cpuNow = inboxCpuReader(inbox, infra);
const client = new Pool(inbox.url, { connections: C, pipelining: 1 });

async function post(path: string, body: string, headers: Record<string, string>): Promise<void> {
  const res = await client.request({
    method: 'POST',
    path,
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
  await res.body.dump();
  if (res.statusCode >= 300) throw new Error(`${path}: HTTP ${res.statusCode}`);
}

// Committed bodies: chats publishes each body's event once its statement has committed.
const nc = await connectNats(infra.natsUrl, 'bench-per-request');
const committed = new Set<string>();
const decoder = new TextDecoder();
void (async () => {
  for await (const m of nc.subscribe(networkEvent.subject(instanceId(inbox.instance)))) {
    const event = networkEvent.schema.parse(JSON.parse(decoder.decode(m.data)));
    for (const [, wamid] of event.body.matchAll(/"id":\s*"(wamid\.[^"]+)"/g)) if (wamid) committed.add(wamid);
  }
})();

const signed = signedBy(seed.webhookSecret);
const webhook = (wamid: string, i: number) => customerWebhook(seed, wamid, i, Math.floor(Date.now() / 1000));

async function ingestRound(tag: string, n: number) {
  const wamids = Array.from({ length: n }, (_, i) => `wamid.per-request.${tag}.${i}`);
  const before = cpuNow();
  const t0 = performance.now();
  const durations = await runConcurrent(n, C, async (i) => {
    const body = webhook(wamids[i] as string, i);
    await post('/api/v1/waba/webhook/', body, signed(body));
  });
  const accepted = performance.now() - t0;
  await waitFor(async () => wamids.every((w) => committed.has(w)), 120_000, 'every body committed');
  const all = performance.now() - t0;
  return {
    accepted: summary(durations, accepted),
    persisted_per_second: Math.round((n / all) * 1000),
    cpu_us_per_request: cpuPerRequest(before, cpuNow(), n),
  };
}

async function sendRound(token: string, n: number, offset: number) {
  const before = cpuNow();
  const t0 = performance.now();
  const durations = await runConcurrent(n, C, async (i) => {
    const body = JSON.stringify({ wa_id: customer(offset + i), type: 'text', text: { body: `reply ${i}` } });
    await post('/api/v1/messages/', body, { authorization: `Token ${token}` });
  });
  const elapsed = performance.now() - t0;
  // The statuses of the last sends come back up to 150 ms after them (and queue behind others).
  await new Promise((resolve) => setTimeout(resolve, 1500));
  return { accepted: summary(durations, elapsed), cpu_us_per_request: cpuPerRequest(before, cpuNow(), n) };
}

const rounds: unknown[] = [];
if (phase === 'ingest') {
  await ingestRound('warm-up', 500);
  for (let r = 0; r < ROUNDS; r++) rounds.push(await ingestRound(`r${r}`, N));
} else {
  const greeted = await Promise.all(
    Array.from({ length: CUSTOMERS }, async (_, i) => {
      const res = await fetch(`${sandbox.url}/sandbox/customers/${customer(i)}/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ type: 'text', text: { body: 'hello' } }),
      });
      if (!res.ok) throw new Error(`customer ${customer(i)}: HTTP ${res.status}`);
      return z.object({ id: z.string() }).parse(await res.json()).id;
    }),
  );
  await waitFor(
    async () => greeted.every((w) => committed.has(w)),
    60_000,
    'every customer message committed',
  );
  const token = await inbox.login();
  await sendRound(token, 200, 0);
  for (let r = 0; r < ROUNDS; r++) rounds.push(await sendRound(token, N, (r + 1) * N));
}

process.stdout.write(
  `${JSON.stringify({ benchmark: 'messaging-per-request', phase, requests: N, concurrency: C, rounds }, null, 2)}\n`,
);
await client.close();
await nc.close();
await inbox.stop();
await sandbox.close();
await infra.stop();
