/**
 * Fan-out benchmark: deliveries per second and publish-to-delivery latency for 1, 10 and 100
 * webhooks, next to a raw baseline measured in the same run (undici pools POSTing the same
 * bodies straight to the same receivers), plus an isolation run with one dead and one 2 s
 * endpoint among 10. Prints JSON on stdout; progress goes to stderr.
 *
 *   node bench/fanout/run.ts            (uses NATS_URL / DATABASE_URL when set, else starts both)
 *   node bench/fanout/run.ts --quick    (smaller workloads, for a smoke run)
 *   node bench/fanout/run.ts --only=10 --burst-events=2000   (one scenario, a longer burst)
 *   node bench/fanout/run.ts --only=10 --warm-up-deliveries=0   (measure a fan-out just started)
 *   node bench/fanout/run.ts --only=10 --fanout-processes=2     (the fan-out as two workers)
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpus, totalmem } from 'node:os';
import { parseArgs } from 'node:util';
import { type FanoutDatabase, fanoutMigrations } from '@switchboard/fanout';
import { connectNats, createDb, migrate } from '@switchboard/kit';
import {
  fanoutRpc,
  instanceId,
  messagesWebhookBody,
  type NetworkEvent,
  networkEvent,
  principalLookup,
} from '@switchboard/proto';
import { type Bus, createBus, createRawPublisher, type RawPublish } from '@switchboard/proto/bus';
import { natsServerBinary, startLocalInfra } from '@switchboard/testkit/infra';
import { admin, type Receiver, spawnService, waitFor } from '@switchboard/testkit/tools';
import { Pool } from 'undici';
import { wholeNumber } from '../options.ts';
import { paced } from '../pacing.ts';
import { cpuMsOfTrees, cpuPerRequest, ownCpuMs } from '../process-cpu.ts';
import { round, summarise } from '../stats.ts';
import { startFanoutFloor } from './floor.ts';
import { deadUrl, startBenchReceiver } from './receivers.ts';

const args = parseArgs({
  strict: true,
  options: {
    // Smaller workloads, for a smoke run.
    quick: { type: 'boolean', default: false },
    // Just the scenario with this many webhooks (and no isolation run), for quick comparisons.
    only: { type: 'string' },
    // Every scenario's burst has this many events (how the rate depends on the burst's length).
    'burst-events': { type: 'string' },
    'warm-up-deliveries': { type: 'string' },
    'fanout-processes': { type: 'string', default: '1' },
  },
}).values;
const quick = args.quick;
/** What nats-server and PostgreSQL said, shown when the run fails. */
const infraLog: string[] = [];
const remember = (line: string) => {
  infraLog.push(line);
  if (infraLog.length > 200) infraLog.splice(0, infraLog.length - 200);
};
const log = (msg: string) => process.stderr.write(`[bench:fanout] ${msg}\n`);
const utf8 = new TextEncoder();

/** Per-webhook in-flight limit of the fan-out; the raw baseline gets the same per receiver. */
const CONCURRENCY = 16;

interface Scenario {
  webhooks: number;
  burstEvents: number;
  pacedRate: number;
  pacedSeconds: number;
}

const scenarios: Scenario[] = quick
  ? [
      { webhooks: 1, burstEvents: 300, pacedRate: 50, pacedSeconds: 2 },
      { webhooks: 10, burstEvents: 60, pacedRate: 20, pacedSeconds: 2 },
      { webhooks: 100, burstEvents: 6, pacedRate: 2, pacedSeconds: 2 },
    ]
  : [
      { webhooks: 1, burstEvents: 3000, pacedRate: 200, pacedSeconds: 5 },
      { webhooks: 10, burstEvents: 500, pacedRate: 50, pacedSeconds: 5 },
      { webhooks: 100, burstEvents: 50, pacedRate: 5, pacedSeconds: 5 },
    ];
if (args['burst-events'] !== undefined) {
  const events = wholeNumber(args['burst-events'], 'burst-events', 1);
  for (const s of scenarios) s.burstEvents = events;
}
/**
 * `--warm-up-deliveries=D` (20,000; none with `--quick`): before a scenario's measured rounds,
 * one unmeasured burst of about D deliveries (D ÷ webhooks events) through the raw client, the
 * floor and the fan-out alike. A fan-out process just started spent 98–130 µs of CPU per
 * delivery in its first 15,000 deliveries, and 54–64 µs in rounds after a warm-up of 20,000;
 * the rounds measure the second, as a fan-out that has been running a while.
 */
const warmUpDeliveries =
  args['warm-up-deliveries'] === undefined
    ? quick
      ? 0
      : 20_000
    : wholeNumber(args['warm-up-deliveries'], 'warm-up-deliveries', 0);
/**
 * `--fanout-processes=N` (1): the fan-out as N processes sharing the durables, as ops scale it.
 * The raw client and the floor stay one process each, so a figure with N > 1 answers "what does
 * a second worker give on this machine", not the ratio the targets speak of. The rounds start
 * once one process delivers; the warm-up gives the others time to join.
 */
const fanoutProcesses = wholeNumber(args['fanout-processes'], 'fanout-processes', 1);
const only = args.only === undefined ? undefined : wholeNumber(args.only, 'only', 1);
if (only !== undefined && !scenarios.some((s) => s.webhooks === only))
  throw new Error(`--only must name a scenario's webhooks (${scenarios.map((s) => s.webhooks).join(', ')})`);
const isolation = quick ? { rate: 20, seconds: 2 } : { rate: 50, seconds: 6 };
/** Bursts and isolation runs repeat, alternating with their comparison, because one run on a small shared machine is noise. */
const ROUNDS = quick ? 1 : 3;
const ISOLATION_ROUNDS = quick ? 1 : 2;

function networkBody(eventId: string, i: number): string {
  const number = { wabaId: eventId, displayPhoneNumber: '15550000000', phoneNumberId: '100000000000001' };
  return JSON.stringify(
    messagesWebhookBody(number, {
      contacts: [{ profile: { name: 'Bench Customer' }, wa_id: '491701234567' }],
      messages: [
        {
          from: '491701234567',
          id: `wamid.HBgM${eventId}`,
          timestamp: String(Math.floor(Date.now() / 1000)),
          type: 'text',
          text: { body: `benchmark message number ${i}` },
        },
      ],
    }),
  );
}

let eventCounter = 0;
function makeEvent(): NetworkEvent {
  const id = `ev-${randomBytes(6).toString('hex')}-${eventCounter++}`;
  return {
    event_id: id,
    kinds: ['message'],
    wa_ids: ['491701234567'],
    received_at: Date.now(),
    body: networkBody(id, eventCounter),
  };
}

function latencies(receivers: readonly Receiver[], sentAt: ReadonlyMap<string, number>): number[] {
  const out: number[] = [];
  for (const r of receivers) {
    for (const a of r.requests) {
      const t = sentAt.get(a.eventId ?? '');
      if (t !== undefined) out.push(a.at - t);
    }
  }
  return out;
}

function arrivedFor(receivers: readonly Receiver[], sentAt: ReadonlyMap<string, number>): number {
  let n = 0;
  for (const r of receivers) for (const a of r.requests) if (sentAt.has(a.eventId ?? '')) n++;
  return n;
}

async function waitArrivals(
  receivers: readonly Receiver[],
  sentAt: ReadonlyMap<string, number>,
  what: string,
) {
  const expected = receivers.length * sentAt.size;
  await waitFor(async () => arrivedFor(receivers, sentAt) >= expected, 300_000, what);
}

function lastArrival(receivers: readonly Receiver[], sentAt: ReadonlyMap<string, number>): number {
  let last = 0;
  for (const r of receivers)
    for (const a of r.requests) if (sentAt.has(a.eventId ?? '')) last = Math.max(last, a.at);
  return last;
}

/**
 * Publishes `count` events as fast as JetStream acknowledges them (a window of outstanding
 * publishes), as chats does after storing network webhooks: to the instance's events stream for
 * the fan-out (`toFanout`), or to the floor's stream.
 */
async function publishBurst(
  publish: (e: NetworkEvent) => Promise<unknown>,
  count: number,
): Promise<Map<string, number>> {
  const sentAt = new Map<string, number>();
  const events = Array.from({ length: count }, makeEvent);
  let next = 0;
  const worker = async () => {
    for (let e = events[next++]; e; e = events[next++]) {
      sentAt.set(e.event_id, performance.now());
      await publish(e);
    }
  };
  await Promise.all(Array.from({ length: 256 }, worker));
  return sentAt;
}

/** The raw baseline: one undici Pool per receiver with the fan-out's per-webhook concurrency. */
function rawPoster(receivers: readonly Receiver[]) {
  const pools = receivers.map((r) => {
    const u = new URL(r.url);
    return { pool: new Pool(u.origin, { connections: CONCURRENCY }), path: u.pathname };
  });
  return {
    async post(body: string): Promise<void> {
      await Promise.all(
        pools.map(async ({ pool, path }) => {
          const res = await pool.request({
            method: 'POST',
            path,
            body,
            headers: { 'content-type': 'application/json' },
          });
          await res.body.dump();
        }),
      );
    },
    close: () => Promise.all(pools.map((p) => p.pool.close())),
  };
}

/** Deliveries of a burst, and their rate from `started` to the last one received. */
function throughput(receivers: readonly Receiver[], sentAt: Map<string, number>, started: number) {
  const deliveries = receivers.length * sentAt.size;
  const seconds = (lastArrival(receivers, sentAt) - started) / 1000;
  return { deliveries, deliveries_per_s: round(deliveries / seconds) };
}

async function createHooks(bus: Bus, urls: readonly string[]): Promise<string[]> {
  const ids: string[] = [];
  for (const url of urls) ids.push((await bus.request(fanoutRpc.create, { principal: admin, url })).id);
  return ids;
}

async function deleteHooks(bus: Bus, ids: readonly string[]): Promise<void> {
  for (const id of ids) await bus.request(fanoutRpc.delete, { principal: admin, id });
}

/** Events for the fan-out: the instance's events stream, through the bus. */
const toFanout = (bus: Bus) => (e: NetworkEvent) => bus.publish(networkEvent, e);

/** One event through every webhook: proves the child's consumers for them are running. */
async function warmUp(bus: Bus, receivers: readonly Receiver[]): Promise<void> {
  const sentAt = await publishBurst(toFanout(bus), 1);
  await waitArrivals(receivers, sentAt, 'warm-up delivery');
  for (const r of receivers) r.reset();
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] ?? Number.NaN) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

interface Round {
  rate: number;
  latencies: number[];
  /** Microseconds of CPU per delivery, per process, in this round. */
  cpu: Record<string, number>;
}

/**
 * Several rounds of one burst: the median rate, latencies pooled over the rounds, and the CPU
 * per delivery of the round whose rate is the median.
 */
function combine(rounds: readonly Round[]) {
  const rate = median(rounds.map((r) => r.rate));
  const middle = [...rounds].sort((a, b) => Math.abs(a.rate - rate) - Math.abs(b.rate - rate))[0];
  return {
    deliveries_per_s: round(rate),
    rounds_deliveries_per_s: rounds.map((r) => round(r.rate)),
    latency: summarise(rounds.flatMap((r) => r.latencies)),
    cpu_us_per_delivery: middle?.cpu ?? {},
  };
}

/** CPU used so far per process (ms): the fan-out, nats-server, PostgreSQL, and this process. */
type CpuReader = () => Record<string, number>;

/**
 * One burst through a publishing path (the fan-out's or the floor's) until every receiver has
 * every event: its rate, latencies and CPU per delivery, and how long the publishing took.
 */
async function burstRound(
  receivers: readonly Receiver[],
  cpuNow: CpuReader,
  publish: (e: NetworkEvent) => Promise<unknown>,
  events: number,
  what: string,
): Promise<{ round: Round; publishSeconds: number }> {
  const cpu = cpuNow();
  const start = performance.now();
  const sent = await publishBurst(publish, events);
  const publishSeconds = (performance.now() - start) / 1000;
  await waitArrivals(receivers, sent, `${what} burst deliveries`);
  // Read before the bench works the figures out, which is not the burst's cost.
  const cpuAfter = cpuNow();
  const t = throughput(receivers, sent, start);
  const round_ = {
    rate: t.deliveries_per_s,
    latencies: latencies(receivers, sent),
    cpu: cpuPerRequest(cpu, cpuAfter, t.deliveries),
  };
  for (const r of receivers) r.reset();
  return { round: round_, publishSeconds };
}

/** What the fan-out floor of a scenario needs: NATS, and the processes whose CPU counts beside its own. */
interface FloorContext {
  natsUrl: string;
  publish: RawPublish;
  infraPids: { nats: number | undefined; postgres: number | undefined };
  /** Where the scenario registers the floor's stop, so a failed run stops it too. */
  stops: Array<() => Promise<unknown>>;
}

async function runScenario(bus: Bus, s: Scenario, cpuNow: CpuReader, floorCtx: FloorContext) {
  log(`N=${s.webhooks}: starting receivers and webhooks`);
  const receivers = await Promise.all(Array.from({ length: s.webhooks }, () => startBenchReceiver()));
  const raw = rawPoster(receivers);
  // Warm the receivers' keep-alive sockets and the JIT before anything is measured.
  await raw.post(networkBody('ev-warm', 0));
  const ids = await createHooks(
    bus,
    receivers.map((r) => r.url),
  );
  await warmUp(bus, receivers);
  const floor = await startFanoutFloor({
    natsUrl: floorCtx.natsUrl,
    urls: receivers.map((r) => r.url),
    concurrency: CONCURRENCY,
  });
  floorCtx.stops.push(() => floor.stop());
  const toFloor = (e: NetworkEvent) => floorCtx.publish(floor.subject, utf8.encode(JSON.stringify(e)));
  const floorCpuNow: CpuReader = () => ({
    ...cpuMsOfTrees({ fanout_floor: floor.pid, ...floorCtx.infraPids }),
    bench_and_receivers: ownCpuMs(),
  });
  await waitArrivals(receivers, await publishBurst(toFloor, 1), 'floor warm-up delivery');
  for (const r of receivers) r.reset();
  const warmUpEvents = Math.ceil(warmUpDeliveries / s.webhooks);
  if (warmUpEvents > 0) {
    log(`N=${s.webhooks}: warm-up burst of ${warmUpEvents} events (not measured)`);
    await Promise.all(Array.from({ length: warmUpEvents }, makeEvent).map((e) => raw.post(e.body)));
    for (const r of receivers) r.reset();
    await burstRound(receivers, floorCpuNow, toFloor, warmUpEvents, 'floor warm-up');
    await burstRound(receivers, cpuNow, toFanout(bus), warmUpEvents, 'fan-out warm-up');
  }

  const rawRounds: Round[] = [];
  const floorRounds: Round[] = [];
  const fanRounds: Round[] = [];
  const publishSeconds: number[] = [];
  // Raw, the floor and the fan-out take turns, so a noisy moment on the machine hits all alike.
  for (let round_ = 0; round_ < ROUNDS; round_++) {
    log(`N=${s.webhooks}: burst of ${s.burstEvents} events, round ${round_ + 1}/${ROUNDS}`);
    const rawSent = new Map<string, number>();
    const rawCpu = ownCpuMs();
    const rawStart = performance.now();
    await Promise.all(
      Array.from({ length: s.burstEvents }, makeEvent).map((e) => {
        rawSent.set(e.event_id, rawStart);
        return raw.post(e.body);
      }),
    );
    const rawCpuAfter = ownCpuMs();
    const r = throughput(receivers, rawSent, rawStart);
    rawRounds.push({
      rate: r.deliveries_per_s,
      latencies: latencies(receivers, rawSent),
      cpu: cpuPerRequest({ bench_and_receivers: rawCpu }, { bench_and_receivers: rawCpuAfter }, r.deliveries),
    });
    for (const rc of receivers) rc.reset();

    floorRounds.push((await burstRound(receivers, floorCpuNow, toFloor, s.burstEvents, 'floor')).round);
    const fan = await burstRound(receivers, cpuNow, toFanout(bus), s.burstEvents, 'fan-out');
    fanRounds.push(fan.round);
    publishSeconds.push(fan.publishSeconds);
  }
  // The paced phases below do not use it.
  await floor.stop();

  log(`N=${s.webhooks}: paced ${s.pacedRate} events/s for ${s.pacedSeconds} s`);
  const rawPacedSent = new Map<string, number>();
  await paced(s.pacedRate, s.pacedSeconds, async () => {
    const e = makeEvent();
    rawPacedSent.set(e.event_id, performance.now());
    await raw.post(e.body);
  });
  const rawPaced = summarise(latencies(receivers, rawPacedSent));
  for (const r of receivers) r.reset();
  await raw.close();

  const pacedSent = new Map<string, number>();
  await paced(s.pacedRate, s.pacedSeconds, async () => {
    const e = makeEvent();
    pacedSent.set(e.event_id, performance.now());
    await toFanout(bus)(e);
  });
  await waitArrivals(receivers, pacedSent, 'paced deliveries');
  const fanPaced = summarise(latencies(receivers, pacedSent));

  await deleteHooks(bus, ids);
  await Promise.all(receivers.map((r) => r.close()));
  const fanBurst = combine(fanRounds);
  const rawBurst = combine(rawRounds);
  const floorBurst = combine(floorRounds);
  return {
    webhooks: s.webhooks,
    burst: {
      events: s.burstEvents,
      deliveries: s.burstEvents * s.webhooks,
      fanout: { ...fanBurst, publish_seconds_median: round(median(publishSeconds), 3) },
      raw: rawBurst,
      throughput_ratio: round(fanBurst.deliveries_per_s / rawBurst.deliveries_per_s, 3),
      floor: floorBurst,
      floor_ratio_to_raw: round(floorBurst.deliveries_per_s / rawBurst.deliveries_per_s, 3),
      ratio_to_floor: round(fanBurst.deliveries_per_s / floorBurst.deliveries_per_s, 3),
    },
    paced: {
      events_per_s: s.pacedRate,
      deliveries_per_s: s.pacedRate * s.webhooks,
      seconds: s.pacedSeconds,
      fanout: fanPaced,
      raw: rawPaced,
    },
  };
}

async function runIsolation(bus: Bus, db: ReturnType<typeof createDb<FanoutDatabase>>) {
  const healthy = await Promise.all(Array.from({ length: 8 }, () => startBenchReceiver()));
  const healthyIds = await createHooks(
    bus,
    healthy.map((r) => r.url),
  );
  await warmUp(bus, healthy);

  const measure = async (label: string): Promise<number[]> => {
    log(`isolation: ${label}, paced ${isolation.rate} events/s for ${isolation.seconds} s`);
    const sent = new Map<string, number>();
    await paced(isolation.rate, isolation.seconds, async () => {
      const e = makeEvent();
      sent.set(e.event_id, performance.now());
      await toFanout(bus)(e);
    });
    await waitArrivals(healthy, sent, `healthy deliveries (${label})`);
    const out = latencies(healthy, sent);
    for (const r of healthy) r.reset();
    return out;
  };

  const alone: number[][] = [];
  const withBad: number[][] = [];
  let slowDelivered = 0;
  let deadAttempts = 0;
  // Alternating rounds, fresh bad endpoints each time, so drift on the machine hits both alike.
  for (let round_ = 0; round_ < ISOLATION_ROUNDS; round_++) {
    alone.push(await measure(`8 healthy alone, round ${round_ + 1}/${ISOLATION_ROUNDS}`));
    const slow = await startBenchReceiver(2_000);
    const [slowId, deadId] = await createHooks(bus, [slow.url, await deadUrl()]);
    await warmUp(bus, healthy);
    withBad.push(await measure(`8 healthy + 1 dead + 1 slow (2 s), round ${round_ + 1}/${ISOLATION_ROUNDS}`));
    slowDelivered += slow.requests.length;
    if (deadId) {
      const { n } = await db
        .selectFrom('webhook_attempts')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('webhook_id', '=', deadId)
        .executeTakeFirstOrThrow();
      deadAttempts += Number(n);
    }
    await deleteHooks(bus, [...(slowId ? [slowId] : []), ...(deadId ? [deadId] : [])]);
    await slow.close();
  }

  await deleteHooks(bus, healthyIds);
  await Promise.all(healthy.map((r) => r.close()));
  const without = summarise(alone.flat());
  const withBadSummary = summarise(withBad.flat());
  return {
    webhooks: 10,
    healthy: 8,
    events_per_s: isolation.rate,
    seconds_per_round: isolation.seconds,
    rounds: ISOLATION_ROUNDS,
    healthy_without_bad: { ...without, rounds_p99_ms: alone.map((l) => summarise(l).p99_ms) },
    healthy_with_bad: { ...withBadSummary, rounds_p99_ms: withBad.map((l) => summarise(l).p99_ms) },
    p99_ratio: round(withBadSummary.p99_ms / without.p99_ms, 3),
    slow_endpoint_deliveries: slowDelivered,
    dead_endpoint_attempts_logged: deadAttempts,
  };
}

function machine() {
  const nats = natsServerBinary();
  const version = nats ? spawnSync(nats, ['--version'], { encoding: 'utf8' }).stdout.trim() : 'external';
  return {
    cpu: cpus()[0]?.model ?? 'unknown',
    cpus: cpus().length,
    memory_gb: round(totalmem() / 2 ** 30, 1),
    platform: `${process.platform} ${process.arch}`,
    node: process.version,
    nats_server: process.env.NATS_URL ? 'external' : version,
  };
}

async function main(): Promise<void> {
  const stops: Array<() => Promise<unknown>> = [];
  const cleanUp = async () => {
    for (const stop of stops.reverse()) {
      let timer: NodeJS.Timeout | undefined;
      const limit = new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('timed out')), 15_000);
      });
      await Promise.race([stop(), limit])
        .catch((err: unknown) => log(`clean-up: ${String(err)}`))
        .finally(() => clearTimeout(timer));
    }
  };
  try {
    await run(stops);
  } catch (err) {
    log(`failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exitCode = 1;
  } finally {
    await cleanUp();
  }
}

async function run(stops: Array<() => Promise<unknown>>): Promise<void> {
  // NATS_URL / DATABASE_URL when set, else nats-server and a throw-away PostgreSQL.
  const infra = await startLocalInfra({ fast: true, log: (server, line) => remember(`${server}: ${line}`) });
  stops.push(() => infra.stop());
  const natsUrl = infra.natsUrl;
  const dbUrl = await infra.createDatabase('bench_fanout');
  const db = createDb<FanoutDatabase>({ url: dbUrl, applicationName: 'bench-fanout' });
  stops.push(() => db.destroy());
  await migrate(db, 'fanout', fanoutMigrations);

  const instance = instanceId(`bench-${randomBytes(4).toString('hex')}`);
  const nc = await connectNats(natsUrl, 'bench-fanout');
  stops.push(() => nc.drain());
  const bus = await createBus(nc, instance);
  await bus.ensureStreams();
  // The gateway's side of the identity contract: every webhook here belongs to the admin.
  bus.serve(principalLookup, async ({ user_id }) => ({
    principal: user_id === admin.user_id ? admin : null,
  }));

  // The fan-out runs as its own process (or N of them), as deployed.
  const fanouts = Array.from({ length: fanoutProcesses }, () => {
    const p = spawnService(
      new URL('../../services/fanout/src/main.ts', import.meta.url).pathname,
      {
        DATABASE_URL: dbUrl,
        NATS_URL: natsUrl,
        INSTANCE_ID: instance,
        OTEL_SDK_DISABLED: 'true',
        WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
        INBOX_SECRET_KEY: 'bench-secret-key-0123456789abcdef0123',
      },
      // e.g. FANOUT_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" to profile the fan-out.
      process.env.FANOUT_NODE_ARGS?.split(' ').filter(Boolean),
    );
    stops.push(() => p.stop());
    return p;
  });
  const infraPids = { nats: infra.nats?.pid, postgres: infra.postgres?.pid };
  const cpuNow: CpuReader = () => {
    const ms = cpuMsOfTrees({
      ...Object.fromEntries(fanouts.map((p, i) => [`fanout_${i}`, p.child.pid])),
      ...infraPids,
    });
    let fanout = 0;
    for (const [name, v] of Object.entries(ms))
      if (name.startsWith('fanout_')) {
        fanout += v;
        delete ms[name];
      }
    return { fanout, ...ms, bench_and_receivers: ownCpuMs() };
  };

  try {
    await waitFor(
      async () => {
        await bus.request(fanoutRpc.list, { principal: admin, limit: 1, offset: 0 }, { timeoutMs: 500 });
        return true;
      },
      60_000,
      'fanout process answering',
    );
    const floorCtx: FloorContext = { natsUrl, publish: createRawPublisher(nc), infraPids, stops };
    const results = [];
    for (const s of scenarios)
      if (only === undefined || s.webhooks === only)
        results.push(await runScenario(bus, s, cpuNow, floorCtx));
    const iso = only === undefined ? await runIsolation(bus, db) : null;
    const report = {
      benchmark: 'fanout',
      quick,
      warm_up_deliveries: warmUpDeliveries,
      fanout_processes: fanoutProcesses,
      machine: machine(),
      notes:
        'latency = publish of the network event to the events stream -> request received by the webhook; ' +
        'raw = undici Pool per receiver (16 connections, like the per-webhook limit) POSTing the same bodies, ' +
        'latency from the instant the raw client was handed the body. Burst: all events at once; paced: fixed rate.',
      scenarios: results,
      isolation: iso,
    };
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  } catch (err) {
    for (const [i, p] of fanouts.entries()) log(`fanout ${i} output:\n${p.output().slice(-5_000)}`);
    log(`infrastructure output:\n${infraLog.slice(-40).join('')}`);
    throw err;
  }
}

await main();
