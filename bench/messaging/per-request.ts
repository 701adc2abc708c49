/**
 * What one request costs each process, for comparing two checkouts: one phase of
 * `bench:messaging` alone, long enough for the CPU times in /proc to be read with a few per
 * cent of noise, with nothing else in the run.
 *
 *   node bench/messaging/per-request.ts --phase ingest [--requests 6000] [--concurrency 32] [--rounds 2]
 *   node bench/messaging/per-request.ts --phase send [--requests 2000] [--concurrency 32|1]
 *   ... [--profile DIR]   (V8 CPU profiles of the gateway and chats, as in run.ts)
 *   ... [--shape one-process]   (the whole inbox in one process, as in run.ts)
 *   ... [--traces]   (the inbox exports its traces, as in run.ts)
 *
 * `ingest`: signed network webhooks (a customer message each, 200 customers), until every body
 * is committed (its event is out). `send`: `POST /api/v1/messages/` to 200 customers who wrote
 * first, the sandbox posting `sent`, `delivered` and `read` back 50, 100 and 150 ms after each,
 * until the first status of every send is committed. Per round: the rate, p50/p99, and the CPU per request of the
 * gateway, chats, nats-server, PostgreSQL (with its backends) and this process (the client and
 * the sandbox). Machines here drift by tens of per cent within an hour: compare two checkouts by
 * running each in turn, several times.
 */

import { parseArgs } from 'node:util';
import { waitFor } from '@switchboard/testkit/tools';
import { Pool } from 'undici';
import { z } from 'zod';
import { wholeNumber } from '../options.ts';
import { cpuPerRequest } from '../process-cpu.ts';
import { runConcurrent, summary } from './stats.ts';
import {
  customerWebhook,
  greetCustomers,
  postJson,
  replyBody,
  STACK_ARGS,
  signedBy,
  stackOptionsOf,
  startMessagingStack,
  watchCommitted,
} from './workload.ts';

const args = parseArgs({
  options: {
    phase: { type: 'string' },
    requests: { type: 'string' },
    concurrency: { type: 'string', default: '32' },
    rounds: { type: 'string', default: '2' },
    ...STACK_ARGS,
  },
}).values;
const stackOptions = stackOptionsOf(args);
const { shape, traces } = stackOptions;
const phase = z.enum(['ingest', 'send']).parse(args.phase);
const N = wholeNumber(args.requests ?? (phase === 'ingest' ? '6000' : '2000'), 'requests', 1);
const C = wholeNumber(args.concurrency, 'concurrency', 1);
const ROUNDS = wholeNumber(args.rounds, 'rounds', 1);

const { seed, sandbox, inbox, infra, cpuNow, traceExports, stop } = await startMessagingStack(
  'bench_per_request',
  stackOptions,
);
const client = new Pool(inbox.url, { connections: C, pipelining: 1 });

async function post(path: string, body: string, headers: Record<string, string>): Promise<void> {
  const status = await postJson(client, path, body, headers);
  if (status >= 300) throw new Error(`${path}: HTTP ${status}`);
}

/** Distinct wamids seen in committed events: every body's own, and every send's once its first status is in. */
let wamidsSeen = 0;
const { allCommitted, close } = await watchCommitted(infra.natsUrl, inbox.instance, {
  name: 'bench-per-request',
  onFirst: () => {
    wamidsSeen++;
  },
});

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
  await allCommitted(wamids, 'every body committed');
  const all = performance.now() - t0;
  return {
    accepted: summary(durations, accepted),
    persisted_per_second: Math.round((n / all) * 1000),
    cpu_us_per_request: cpuPerRequest(before, cpuNow(), n),
  };
}

async function sendRound(token: string, n: number, offset: number) {
  const seenBefore = wamidsSeen;
  const before = cpuNow();
  const t0 = performance.now();
  const durations = await runConcurrent(n, C, async (i) => {
    await post('/api/v1/messages/', replyBody(offset + i), { authorization: `Token ${token}` });
  });
  const elapsed = performance.now() - t0;
  // What a send costs includes its statuses: until the first of each is committed (the
  // sandbox posts them 50, 100 and 150 ms after the send).
  await waitFor(async () => wamidsSeen >= seenBefore + n, 300_000, 'a status of every send');
  return { accepted: summary(durations, elapsed), cpu_us_per_request: cpuPerRequest(before, cpuNow(), n) };
}

const rounds: unknown[] = [];
if (phase === 'ingest') {
  await ingestRound('warm-up', 500);
  for (let r = 0; r < ROUNDS; r++) rounds.push(await ingestRound(`r${r}`, N));
} else {
  await allCommitted(await greetCustomers(sandbox), 'every customer message committed');
  const token = await inbox.login();
  await sendRound(token, 200, 0);
  for (let r = 0; r < ROUNDS; r++) rounds.push(await sendRound(token, N, (r + 1) * N));
}

process.stdout.write(
  `${JSON.stringify(
    {
      benchmark: 'messaging-per-request',
      phase,
      shape,
      traces,
      requests: N,
      concurrency: C,
      rounds,
      ...(traces && { trace_exports: traceExports() }),
    },
    null,
    2,
  )}\n`,
);
await client.close();
await close();
await stop();
