/**
 * Messaging benchmarks on real infrastructure (nats-server, embedded PostgreSQL, the sandbox,
 * gateway and chats as their own processes, or with `--shape one-process` the whole inbox in
 * one process as the local runtime runs it):
 *
 *  ingest:            signed network webhooks POSTed to the gateway as fast as `--concurrency`
 *                     allows: accepted per second (gateway 200), and persisted per second and
 *                     latency (gateway 200 → chats committed the row and handed the event on:
 *                     the bench listens to the instance's `events.network` subject).
 *  ingest_paced:      the same at a fixed rate of half the measured maximum: p50/p99 from
 *                     gateway 200 to the event (the latency users see in normal operation).
 *  ingest_sequential: one webhook at a time: POST → 200 and POST → event.
 *  send_sequential:   one POST /api/v1/messages/ at a time → 202, back to back (each send's
 *                     statuses flow back while the next ones are sent).
 *  send_sequential_late: the same after the throughput rounds, once with the statuses flowing
 *                     and then while the network holds every status back: what the statuses of
 *                     earlier sends cost a send, the two measured at one moment, with the CPU
 *                     per send of each and the shortest mean interval it allows on these cores.
 *  send_idle:         one send every 250 ms, by when the statuses of the one before (posted 50,
 *                     100 and 150 ms after it) are normally back: one send on an idle inbox.
 *  send:              POST /api/v1/messages/ → 202 under `--concurrency`, while the sandbox's
 *                     status webhooks (sent, delivered, read) flow back as in production; with
 *                     the bound those webhooks alone set through the ingest floor.
 *
 * Every figure is printed beside a raw baseline measured in the same run with the same client
 * and concurrency: a bare Fastify server answering the same POST with no work. The sequential
 * and idle sends also have a hop floor (`hop-floor.ts`): the same process hand-overs as a send
 * (front, nats-server, responder, one committed insert) with no work in between; the ingest has
 * an ingest floor (`ingest-floor.ts`): the gateway's and chats' hand-overs and batching (a
 * JetStream publish per body, a pull consumer storing each batch in one statement and publishing
 * an event per body) with none of their work, measured in every round between raw and pipeline.
 *
 *   node bench/messaging/run.ts [--messages 2000] [--concurrency 32] [--rounds 3] [--warm-up 200] [--profile DIR]
 *                               [--shape processes|one-process] [--traces]
 */

import { mkdir, writeFile } from 'node:fs/promises';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { repoRoot, waitFor } from '@switchboard/testkit/tools';
import Fastify from 'fastify';
import { Pool } from 'undici';
import { wholeNumber } from '../options.ts';
import { cpuMsOfTrees, cpuPerRequest, ownCpuMs } from '../process-cpu.ts';
import { round } from '../stats.ts';
import { startHopFloor } from './hop-floor.ts';
import { startIngestFloor } from './ingest-floor.ts';
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
    messages: { type: 'string', default: '2000' },
    concurrency: { type: 'string', default: '32' },
    // Rounds of the two throughput phases (raw, then the pipeline): the median round is reported.
    rounds: { type: 'string', default: '3' },
    // Requests before the first round of each throughput phase, to the pipeline and the raw
    // server alike.
    'warm-up': { type: 'string', default: '200' },
    ...STACK_ARGS,
  },
}).values;
const stackOptions = stackOptionsOf(args);
const { shape, traces } = stackOptions;
const N = wholeNumber(args.messages, 'messages', 1);
const WARM_UP = wholeNumber(args['warm-up'], 'warm-up', 0);
const C = wholeNumber(args.concurrency, 'concurrency', 1);

// NATS_URL / DATABASE_URL when set, else nats-server and PostgreSQL of its own.
const { infra, sandbox, seed, inbox, cpuNow, traceExports, stop } = await startMessagingStack(
  'bench_messaging',
  stackOptions,
);
const { url, instance } = inbox;
const benchCpuNow = () => ({ bench_and_raw_server: ownCpuMs() });

const client = new Pool(url, { connections: C, pipelining: 1 });
const webhookBody = (wamid: string, i: number, ts: number) => customerWebhook(seed, wamid, i, ts);

const post = (path: string, body: string, headers: Record<string, string>, base = client) =>
  postJson(base, path, body, headers);

// ---- raw baseline: Fastify answering the same POSTs with no work ----
const raw = Fastify({ logger: false, bodyLimit: 4 * 1024 * 1024 });
raw.post('/api/v1/waba/webhook/', async () => ({ status: 'accepted' }));
raw.post('/api/v1/messages/', async (_req, reply) => reply.status(202).send({ id: 'x' }));
raw.post('/sandbox/customers/:wa_id/messages', async () => ({ id: 'x' }));
await raw.listen({ host: '127.0.0.1', port: 0 });
const rawAddr = raw.server.address();
if (!rawAddr || typeof rawAddr === 'string') throw new Error('no raw port');
const rawClient = new Pool(`http://127.0.0.1:${rawAddr.port}`, { connections: C, pipelining: 1 });

/** Runs `n` POSTs with `concurrency` in flight (warm-up first); durations and when each answered. */
async function measure(
  label: string,
  base: Pool,
  path: string,
  body: (i: number) => string,
  headers: (b: string) => Record<string, string>,
  opts: {
    n?: number;
    concurrency?: number;
    warmUp?: (i: number) => string;
    /** Warm-up requests (200 or `n` when fewer). */
    warmUpCount?: number;
    /** Waits for what the warm-up set going (commits, statuses) before the measured requests. */
    afterWarmUp?: (count: number) => Promise<void>;
    /** Read after the warm-up: the CPU used so far, to tell what the measured requests cost. */
    cpu?: () => Record<string, number>;
  } = {},
) {
  const n = opts.n ?? N;
  const concurrency = opts.concurrency ?? C;
  const warmUp = opts.warmUp;
  if (warmUp) {
    const count = opts.warmUpCount ?? Math.min(200, n);
    await runConcurrent(count, concurrency, async (i) => {
      const b = warmUp(i);
      await post(path, b, headers(b), base);
    });
    await opts.afterWarmUp?.(count);
  }
  const answeredAt: number[] = new Array(n);
  const statuses: number[] = [];
  const cpuBefore = opts.cpu?.() ?? {};
  const t0 = performance.now();
  const durations = await runConcurrent(n, concurrency, async (i) => {
    const b = body(i);
    statuses.push(await post(path, b, headers(b), base));
    answeredAt[i] = performance.now();
  });
  const elapsed = performance.now() - t0;
  const bad = statuses.filter((st) => st >= 300).length;
  if (bad) throw new Error(`${label}: ${bad} requests failed`);
  return {
    ...summary(durations, elapsed),
    elapsedMs: elapsed,
    durations,
    answeredAt,
    startedAt: t0,
    cpuBefore,
  };
}

const brief = (m: { per_second: number; p50_ms: number; p99_ms: number }) => ({
  per_second: m.per_second,
  p50_ms: m.p50_ms,
  p99_ms: m.p99_ms,
});

// Chats hands every body on as an event once its rows are committed: the bench listens to the
// instance's `events.network` subject and takes an event's arrival as "committed".
/** Distinct network wamids seen in events: the customers' greetings, then every reply with a status. */
let networkWamids = 0;
const { committedAt, committed, allCommitted, statusEvents, close } = await watchCommitted(
  infra.natsUrl,
  instance,
  {
    name: 'bench-messaging',
    onFirst: (wamid) => {
      if (!wamid.startsWith('wamid.bench.')) networkWamids++;
    },
  },
);
const outboundSeen = () => networkWamids;
/** The item whose key is the median (the lower middle of an even count). */
function medianBy<T>(items: readonly T[], key: (x: T) => number): T {
  const sorted = [...items].sort((a, b) => key(a) - key(b));
  const mid = sorted[Math.floor((sorted.length - 1) / 2)];
  if (mid === undefined) throw new Error('no rounds');
  return mid;
}
/** What the JSON reports of one round: its rate beside the raw rate of the same round. */
const roundFigure = (x: {
  raw: { per_second: number };
  accepted: { per_second: number };
  ratio: number;
}) => ({
  per_second: x.accepted.per_second,
  raw_per_second: x.raw.per_second,
  ratio: round(x.ratio, 3),
});
const ingestHeaders = signedBy(seed.webhookSecret);
const ingestPath = '/api/v1/waba/webhook/';
const now = Math.floor(Date.now() / 1000);

// ---- ingest at full speed: rounds of raw then pipeline, so each ratio pairs one moment ----
const ROUNDS = wholeNumber(args.rounds, 'rounds', 1);
type Measured = Awaited<ReturnType<typeof measure>>;
/** Accepted, then committed (the event out), of one round of webhooks whose wamids are `ids`. */
function persistedOf(m: Measured, ids: readonly string[], at: ReadonlyMap<string, number>) {
  const commitTimes = ids.map((w) => at.get(w) ?? Number.NaN);
  return summary(
    ids.map((_, i) => (commitTimes[i] ?? 0) - ((m.answeredAt[i] ?? 0) - (m.durations[i] ?? 0))),
    Math.max(...commitTimes) - m.startedAt,
  );
}

/** Where an ingest round posts, and how it learns that each body is stored. */
interface IngestTarget {
  what: string;
  pool: Pool;
  path: string;
  /** The wamids' prefix: `<prefix>.w<i>` for the warm-up, `<prefix>.b<round>.<i>` for a round. */
  prefix: string;
  headers: (body: string) => Record<string, string>;
  cpu: () => Record<string, number>;
  watch: Pick<Awaited<ReturnType<typeof watchCommitted>>, 'allCommitted' | 'committedAt'>;
}

/** One ingest round through `t` (the first with the warm-up): accepted, persisted, CPU per webhook. */
async function ingestRound(t: IngestTarget, r: number) {
  const wamid = (i: number) => `${t.prefix}.b${r}.${i}`;
  const warm = (i: number) => `${t.prefix}.w${i}`;
  const accepted = await measure(
    `${t.what}, round ${r + 1}`,
    t.pool,
    t.path,
    (i) => webhookBody(wamid(i), i, now),
    t.headers,
    {
      cpu: t.cpu,
      ...(r === 0 && {
        warmUp: (i: number) => webhookBody(warm(i), i, now),
        warmUpCount: WARM_UP,
        afterWarmUp: (count: number) =>
          t.watch.allCommitted(
            Array.from({ length: count }, (_, i) => warm(i)),
            `the ${t.what}'s warm-up stored`,
          ),
      }),
    },
  );
  const ids = Array.from({ length: N }, (_, i) => wamid(i));
  await t.watch.allCommitted(ids, `every webhook of ${t.what} round ${r + 1} stored`);
  // Read once every body is stored: what storing them cost is the round's too.
  const cpu = cpuPerRequest(accepted.cpuBefore, t.cpu(), N);
  return { accepted, persisted: persistedOf(accepted, ids, t.watch.committedAt), cpu };
}

const ingestRounds: Array<{
  raw: Measured;
  accepted: Measured;
  persisted: ReturnType<typeof summary>;
  ratio: number;
  cpu: Record<string, number>;
  rawCpu: Record<string, number>;
  floor: Awaited<ReturnType<typeof ingestRound>>;
}> = [];
// The ingest floor: the inbox's hand-overs with no work (ingest-floor.ts), on the same nats-server
// and PostgreSQL, measured in each round between the raw baseline and the pipeline.
const ingestFloor = await startIngestFloor({
  natsUrl: infra.natsUrl,
  databaseUrl: await infra.createDatabase('bench_ingest_floor'),
});
const ingestFloorClient = new Pool(ingestFloor.url, { connections: C, pipelining: 1 });
let floorWatch: Awaited<ReturnType<typeof watchCommitted>> | undefined;
// A failed round stops the floor too (its processes reconnect to NATS for ever otherwise).
try {
  floorWatch = await watchCommitted(
    infra.natsUrl,
    { subject: ingestFloor.eventSubject },
    { name: 'bench-ingest-floor' },
  );
  const floorTarget: IngestTarget = {
    what: 'ingest floor',
    pool: ingestFloorClient,
    path: ingestFloor.path,
    prefix: 'wamid.floor',
    headers: () => ({}),
    cpu: () => ({
      ...cpuMsOfTrees({ ...ingestFloor.pids, nats: infra.nats?.pid, postgres: infra.postgres?.pid }),
      ...benchCpuNow(),
    }),
    watch: floorWatch,
  };
  const inboxTarget: IngestTarget = {
    what: 'ingest',
    pool: client,
    path: ingestPath,
    prefix: 'wamid.bench',
    headers: ingestHeaders,
    cpu: cpuNow,
    watch: { allCommitted, committedAt },
  };
  for (let r = 0; r < ROUNDS; r++) {
    const rawRound = await measure(
      `raw ingest, round ${r + 1}`,
      rawClient,
      ingestPath,
      (i) => webhookBody(`r${r}.${i}`, i, now),
      () => ({}),
      {
        cpu: benchCpuNow,
        ...(r === 0 && { warmUp: (i: number) => webhookBody(`rw${i}`, i, now), warmUpCount: WARM_UP }),
      },
    );
    const rawCpu = cpuPerRequest(rawRound.cpuBefore, benchCpuNow(), N);
    const floor = await ingestRound(floorTarget, r);
    const inboxRound = await ingestRound(inboxTarget, r);
    ingestRounds.push({
      raw: rawRound,
      ...inboxRound,
      ratio: inboxRound.accepted.per_second / rawRound.per_second,
      rawCpu,
      floor,
    });
  }
} finally {
  await ingestFloor.stop();
  await Promise.allSettled([floorWatch?.close(), ingestFloorClient.close()]);
}
// The round whose ratio is the median: its accepted, raw and persisted figures are reported together.
const medianIngest = medianBy(ingestRounds, (x) => x.ratio);
const {
  raw: rawIngest,
  accepted: ingest,
  persisted,
  cpu: ingestCpu,
  rawCpu: rawIngestCpu,
  floor: ingestFloorRound,
} = medianIngest;

// ---- ingest paced at half the maximum: open loop, one request every 1/rate s ----
const pacedRate = Math.max(1, Math.round(ingest.per_second / 2));
const pacedN = Math.min(N, pacedRate * 5);
const pacedStart = performance.now();
const paced = await Promise.all(
  Array.from({ length: pacedN }, async (_, i) => {
    const due = pacedStart + (i * 1000) / pacedRate;
    await new Promise((r) => setTimeout(r, Math.max(0, due - performance.now())));
    const wamid = `wamid.bench.p${i}`;
    const b = webhookBody(wamid, i, now);
    const sentAt = performance.now();
    const status = await post(ingestPath, b, ingestHeaders(b));
    if (status >= 300) throw new Error(`paced ingest: ${status}`);
    const okAt = performance.now();
    await committed(wamid);
    const at = committedAt.get(wamid) ?? okAt;
    return { accepted: okAt - sentAt, toCommit: at - okAt, total: at - sentAt };
  }),
);
const pacedElapsed = performance.now() - pacedStart;

// ---- one at a time ----
const SEQUENTIAL = 200;
const rawIngestSeq = await measure(
  'raw sequential ingest',
  rawClient,
  ingestPath,
  (i) => webhookBody(`q${i}`, i, now),
  () => ({}),
  {
    n: SEQUENTIAL,
    concurrency: 1,
  },
);
const seqIngestStart = performance.now();
const seqIngest = await Promise.resolve().then(async () => {
  const rows: Array<{ accepted: number; total: number }> = [];
  for (let i = 0; i < SEQUENTIAL; i++) {
    const wamid = `wamid.bench.s${i}`;
    const b = webhookBody(wamid, i, now);
    const t0 = performance.now();
    const status = await post(ingestPath, b, ingestHeaders(b));
    if (status >= 300) throw new Error(`sequential ingest: ${status}`);
    const okAt = performance.now();
    await committed(wamid);
    rows.push({ accepted: okAt - t0, total: (committedAt.get(wamid) ?? okAt) - t0 });
  }
  return rows;
});
// One at a time, each waiting for its commit: the rate is the loop's, for both figures.
const seqIngestElapsed = performance.now() - seqIngestStart;

// ---- send: customers write through the network first, so the network accepts the replies ----
const greeted = await greetCustomers(sandbox);
await allCommitted(greeted, 'every customer message committed');
// The customers' own messages carry the network's wamids too: counted before any reply is sent.
const outboundBefore = outboundSeen();
const statusEventsBefore = statusEvents();

const token = await inbox.login();
const sendBody = replyBody;
const sendHeaders = () => ({ authorization: `Token ${token}` });
const rawSendSeq = await measure(
  'raw sequential send',
  rawClient,
  '/api/v1/messages/',
  sendBody,
  () => ({}),
  {
    n: SEQUENTIAL,
    concurrency: 1,
  },
);
const sendSeq = await measure('sequential send', client, '/api/v1/messages/', sendBody, sendHeaders, {
  n: SEQUENTIAL,
  concurrency: 1,
  warmUp: sendBody,
});
// The send's hand-overs with no work: a front, nats-server, a responder and one committed insert.
const floor = await startHopFloor({
  natsUrl: infra.natsUrl,
  databaseUrl: await infra.createDatabase('bench_hop_floor'),
});
const floorClient = new Pool(floor.url, { connections: 1, pipelining: 1 });
// One send at a time on an otherwise idle inbox: each 250 ms after the one before, by when its
// statuses (the sandbox posts them 50, 100 and 150 ms after a send) have normally come back.
const IDLE_SENDS = 50;
const IDLE_GAP_MS = 250;
const sendIdle: number[] = [];
const rawIdle: number[] = [];
const floorIdle: number[] = [];
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Milliseconds one POST took; it must succeed. */
async function timed(base: Pool, path: string, b: string, headers: Record<string, string> = {}) {
  const t0 = performance.now();
  const status = await post(path, b, headers, base);
  if (status >= 300) throw new Error(`${path}: HTTP ${status}`);
  return performance.now() - t0;
}
let floorSeq: Measured;
try {
  floorSeq = await measure('hop floor, sequential', floorClient, floor.path, sendBody, () => ({}), {
    n: SEQUENTIAL,
    concurrency: 1,
    warmUp: sendBody,
  });
  for (let i = 0; i < IDLE_SENDS; i++) {
    const b = sendBody(i);
    // The raw baseline and the hop floor idle the same way, after the previous send's statuses
    // are in and 40 ms apart.
    await pause(IDLE_GAP_MS - 80);
    rawIdle.push(await timed(rawClient, '/api/v1/messages/', b));
    await pause(40);
    floorIdle.push(await timed(floorClient, floor.path, b));
    await pause(40);
    sendIdle.push(await timed(client, '/api/v1/messages/', b, sendHeaders()));
  }
} finally {
  await floorClient.close();
  await floor.stop();
}
const sendRounds: Array<{
  raw: Measured;
  accepted: Measured;
  ratio: number;
  cpu: Record<string, number>;
  rawCpu: Record<string, number>;
}> = [];
/** Every send so far has had its first status back (the sandbox posts them 50, 100, 150 ms after). */
const statusesBack = (sends: number, what: string) =>
  waitFor(async () => outboundSeen() >= outboundBefore + sends + SEQUENTIAL * 2 + IDLE_SENDS, 300_000, what);
/** Sends of the throughput rounds so far, their warm-up included. */
let sent = 0;
for (let r = 0; r < ROUNDS; r++) {
  // The statuses of the previous round's sends still flowing back would weigh on this one.
  await statusesBack(sent, 'statuses of the earlier sends');
  const rawRound = await measure(
    `raw send, round ${r + 1}`,
    rawClient,
    '/api/v1/messages/',
    sendBody,
    () => ({}),
    { cpu: benchCpuNow, ...(r === 0 && { warmUp: sendBody, warmUpCount: WARM_UP }) },
  );
  const rawCpu = cpuPerRequest(rawRound.cpuBefore, benchCpuNow(), N);
  const round_ = await measure(`send, round ${r + 1}`, client, '/api/v1/messages/', sendBody, sendHeaders, {
    cpu: cpuNow,
    ...(r === 0 && {
      warmUp: sendBody,
      warmUpCount: WARM_UP,
      afterWarmUp: (count: number) => {
        sent += count;
        return statusesBack(sent, 'statuses of the warm-up sends');
      },
    }),
  });
  // What a send costs includes the statuses it brings back.
  sent += N;
  await statusesBack(sent, `statuses of send round ${r + 1}`);
  const cpu = cpuPerRequest(round_.cpuBefore, cpuNow(), N);
  sendRounds.push({
    raw: rawRound,
    accepted: round_,
    ratio: round_.per_second / rawRound.per_second,
    cpu,
    rawCpu,
  });
}
const {
  raw: rawSend,
  accepted: send,
  cpu: sendCpu,
  rawCpu: rawSendCpu,
} = medianBy(sendRounds, (x) => x.ratio);
// The sandbox posts sent/delivered/read for every reply meanwhile: count what came back.
const networkStatuses = outboundSeen();

// ---- last: sequential sends again, with the statuses flowing, then held back ----
// What the statuses of earlier sends (three webhooks each, through gateway, JetStream and chats)
// cost a send, the two measured at the same point of the run. Nothing after this waits for
// statuses: the held ones end with the sandbox (a delay applies to sends made after it is set).
const seenBeforeLate = outboundSeen();
const firstStatusesBack = (sends: number, what: string) =>
  waitFor(async () => outboundSeen() >= seenBeforeLate + sends, 300_000, what);
const lateFlowing = await measure(
  'sequential send, late, statuses flowing',
  client,
  '/api/v1/messages/',
  sendBody,
  sendHeaders,
  {
    n: SEQUENTIAL,
    concurrency: 1,
    warmUp: sendBody,
    afterWarmUp: (count) => firstStatusesBack(count, 'statuses of the late warm-up sends'),
    cpu: cpuNow,
  },
);
// Until the first status of each: most of what the sends brought back.
await firstStatusesBack(2 * SEQUENTIAL, 'statuses of the late sends');
const lateFlowingCpu = cpuPerRequest(lateFlowing.cpuBefore, cpuNow(), SEQUENTIAL);
// Every send so far has its first status back; the rest of their statuses are in by the end of
// the run (the held sends' never come): how many status webhooks a send brings.
const sendsBeforeHold = outboundSeen() - outboundBefore;
const HELD_MS = 3_600_000;
const patched = await fetch(`${sandbox.url}/sandbox/numbers/${seed.phoneNumberId}`, {
  method: 'PATCH',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({
    behaviour: { status_delays_ms: { sent: HELD_MS, delivered: HELD_MS, read: HELD_MS } },
  }),
});
if (!patched.ok) throw new Error(`sandbox status delays: HTTP ${patched.status} ${await patched.text()}`);
const lateHeld = await measure(
  'sequential send, late, statuses held',
  client,
  '/api/v1/messages/',
  sendBody,
  sendHeaders,
  // The warm-up's sends also let the delivered and read statuses of the sends before drain.
  { n: SEQUENTIAL, concurrency: 1, warmUp: sendBody, cpu: cpuNow },
);
const lateHeldCpu = cpuPerRequest(lateHeld.cpuBefore, cpuNow(), SEQUENTIAL);

const statusesPerSend = (statusEvents() - statusEventsBefore) / sendsBeforeHold;
// A send's status webhooks cross the same hand-overs as an inbound body: through the ingest
// floor (no work at all) they pass at its rate, which bounds the sends whose statuses keep up.
const statusesFloorSends = ingestFloorRound.accepted.per_second / statusesPerSend;
const CORES = cpus().length;
/**
 * Back to back, a send and the statuses it brings must all be processed before the loop can go
 * faster: their CPU time spread over every core is the shortest mean interval between sends.
 */
const cpuIntervalMs = (cpu: Record<string, number>) => round((cpu.total ?? 0) / CORES / 1000, 2);
const idleSend = summary(sendIdle, IDLE_SENDS * IDLE_GAP_MS);
const idleFloor = summary(floorIdle, IDLE_SENDS * IDLE_GAP_MS);
const result = {
  benchmark: 'messaging',
  machine: { cpus: CORES, node: process.version },
  parameters: {
    shape,
    traces,
    messages: N,
    concurrency: C,
    sequential: SEQUENTIAL,
    paced_rate_per_second: pacedRate,
  },
  ingest: {
    accepted: brief(ingest),
    raw_baseline: brief(rawIngest),
    ratio_accepted_to_raw: round(ingest.per_second / rawIngest.per_second, 3),
    persisted: { ...brief(persisted), latency_from: 'POST sent' },
    ratio_persisted_to_accepted: round(persisted.per_second / ingest.per_second, 3),
    cpu_us_per_webhook: ingestCpu,
    raw_baseline_cpu_us_per_webhook: rawIngestCpu,
    floor: {
      accepted: brief(ingestFloorRound.accepted),
      ratio_to_raw: round(ingestFloorRound.accepted.per_second / rawIngest.per_second, 3),
      persisted: brief(ingestFloorRound.persisted),
      cpu_us_per_webhook: ingestFloorRound.cpu,
    },
    ratio_accepted_to_floor: round(ingest.per_second / ingestFloorRound.accepted.per_second, 3),
    rounds: ingestRounds.map((x) => ({
      ...roundFigure(x),
      persisted_ratio: round(x.persisted.per_second / x.accepted.per_second, 3),
      floor_per_second: x.floor.accepted.per_second,
      floor_ratio: round(x.floor.accepted.per_second / x.raw.per_second, 3),
      floor_persisted_per_second: x.floor.persisted.per_second,
    })),
  },
  ingest_paced: {
    rate_per_second: round((pacedN / pacedElapsed) * 1000, 1),
    accepted: brief(
      summary(
        paced.map((p) => p.accepted),
        pacedElapsed,
      ),
    ),
    accepted_to_committed: brief(
      summary(
        paced.map((p) => p.toCommit),
        pacedElapsed,
      ),
    ),
    post_to_committed: brief(
      summary(
        paced.map((p) => p.total),
        pacedElapsed,
      ),
    ),
    raw_baseline_sequential: brief(rawIngestSeq),
  },
  ingest_sequential: {
    accepted: brief(
      summary(
        seqIngest.map((r) => r.accepted),
        seqIngestElapsed,
      ),
    ),
    post_to_committed: brief(
      summary(
        seqIngest.map((r) => r.total),
        seqIngestElapsed,
      ),
    ),
    raw_baseline: brief(rawIngestSeq),
  },
  send_sequential: {
    accepted_202: brief(sendSeq),
    raw_baseline: brief(rawSendSeq),
    hop_floor: brief(floorSeq),
    p50_over_hop_floor: round(sendSeq.p50_ms / floorSeq.p50_ms, 2),
  },
  send_sequential_late: {
    statuses_flowing: {
      ...brief(lateFlowing),
      cpu_us_per_send: lateFlowingCpu,
      cpu_interval_ms: cpuIntervalMs(lateFlowingCpu),
    },
    statuses_held: {
      ...brief(lateHeld),
      cpu_us_per_send: lateHeldCpu,
      cpu_interval_ms: cpuIntervalMs(lateHeldCpu),
    },
  },
  send_idle: {
    gap_ms: IDLE_GAP_MS,
    accepted_202: brief(idleSend),
    raw_baseline: brief(summary(rawIdle, IDLE_SENDS * IDLE_GAP_MS)),
    hop_floor: brief(idleFloor),
    p50_over_hop_floor: round(idleSend.p50_ms / idleFloor.p50_ms, 2),
  },
  send: {
    accepted_202: brief(send),
    raw_baseline: brief(rawSend),
    ratio_to_raw: round(send.per_second / rawSend.per_second, 3),
    cpu_us_per_send: sendCpu,
    raw_baseline_cpu_us_per_send: rawSendCpu,
    rounds: sendRounds.map(roundFigure),
    network_wamids_seen_in_events: networkStatuses,
    statuses_through_floor: {
      status_webhooks_per_send: round(statusesPerSend, 2),
      floor_webhooks_per_second: ingestFloorRound.accepted.per_second,
      sends_per_second: round(statusesFloorSends, 1),
      ratio_to_raw: round(statusesFloorSends / rawSend.per_second, 3),
      share_reached: round(send.per_second / statusesFloorSends, 3),
    },
  },
  ...(traces && { trace_exports: traceExports() }),
};
process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
await mkdir(join(repoRoot, 'bench/results'), { recursive: true });
await writeFile(
  join(
    repoRoot,
    `bench/results/${['messaging', ...(shape === 'processes' ? [] : [shape]), ...(traces ? ['traces'] : [])].join('-')}.json`,
  ),
  `${JSON.stringify(result, null, 2)}\n`,
);

await close();
await client.close();
await rawClient.close();
await raw.close();
await stop();
