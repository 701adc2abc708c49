/**
 * End-to-end fan-out latency, the way a webhook owner sees it: from the moment the gateway
 * accepts a network webhook (its 200) to the moment each per-user webhook receives the body,
 * through gateway → JetStream → chats → JetStream → fanout, all as separate processes on real
 * nats-server and PostgreSQL. Beside it, in the same run, the raw baseline: an undici pool
 * POSTing the same bodies straight to the same receivers. Prints JSON.
 *
 * Each side first runs `--warmup` seconds at the same rate, reported apart (`warmup`) and left
 * out of the figures: the first events after a start pay for compiling code paths, first
 * connections and first query plans, which a service that has been running does not.
 *
 *   node bench/fanout/e2e.ts [--webhooks 10] [--rate 50] [--seconds 6] [--warmup 1]
 */
import { createHmac } from 'node:crypto';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { messagesWebhookBody } from '@switchboard/proto';
import { startLocalInfra } from '@switchboard/testkit/infra';
import { freePort, repoRoot, spawnService, uniqueInstanceId, waitFor } from '@switchboard/testkit/tools';
import { Pool } from 'undici';
import { wholeNumber } from '../options.ts';
import { paced } from '../pacing.ts';
import { round, summarise } from '../stats.ts';
import { startBenchReceiver } from './receivers.ts';

const args = parseArgs({
  options: {
    webhooks: { type: 'string', default: '10' },
    rate: { type: 'string', default: '50' },
    seconds: { type: 'string', default: '6' },
    warmup: { type: 'string', default: '1' },
  },
}).values;
const N = wholeNumber(args.webhooks, 'webhooks', 1);
const RATE = wholeNumber(args.rate, 'rate', 1);
const SECONDS = wholeNumber(args.seconds, 'seconds', 1);
const EVENTS = RATE * SECONDS;
const WARMUP_SECONDS = wholeNumber(args.warmup, 'warmup', 0);
const log = (m: string) => process.stderr.write(`[bench:fanout:e2e] ${m}\n`);

// NATS_URL / DATABASE_URL when set, else nats-server and PostgreSQL of its own.
const infra = await startLocalInfra();
const databaseUrl = await infra.createDatabase('bench_fanout_e2e');
const secret = 'bench-network-app-secret';
const port = await freePort();
const url = `http://127.0.0.1:${port}`;
const env = {
  DATABASE_URL: databaseUrl,
  NATS_URL: infra.natsUrl,
  // Its own subjects and streams, also on a NATS given by NATS_URL.
  INSTANCE_ID: uniqueInstanceId('bench'),
  LOG_LEVEL: 'error',
  // No network calls are made: only inbound traffic flows in this benchmark.
  NETWORK_BASE_URL: 'http://127.0.0.1:9',
  NETWORK_API_KEY: 'unused',
  WABA_WEBHOOK_SECRET: secret,
};
const processes = [
  spawnService(join(repoRoot, 'services/gateway/src/main.ts'), {
    ...env,
    PORT: String(port),
    INBOX_SECRET_KEY: 'bench-secret-key-0123456789abcdef0123',
    INBOX_ADMIN_USERNAME: 'operator',
    INBOX_ADMIN_PASSWORD: 'a long quiet passphrase 1',
  }),
  spawnService(join(repoRoot, 'services/chats/src/main.ts'), env),
  spawnService(join(repoRoot, 'services/fanout/src/main.ts'), {
    ...env,
    INBOX_SECRET_KEY: 'bench-secret-key-0123456789abcdef0123',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  }),
];
await waitFor(
  async () => (await fetch(`${url}/api/v1/status/health/`).catch(() => null))?.status === 200,
  60_000,
  () => processes.map((p) => p.output()).join('\n'),
);
const { token } = (await (
  await fetch(`${url}/api/v1/auth/token/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'operator', password: 'a long quiet passphrase 1' }),
  })
).json()) as { token: string };

const receivers = await Promise.all(Array.from({ length: N }, () => startBenchReceiver()));
for (const r of receivers) {
  const res = await fetch(`${url}/api/v1/webhooks/waba/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Token ${token}` },
    body: JSON.stringify({ url: r.url }),
  });
  if (res.status !== 201) throw new Error(`webhook not created: ${res.status} ${await res.text()}`);
}

const body = (id: string) =>
  JSON.stringify(
    messagesWebhookBody(
      { wabaId: 'waba', displayPhoneNumber: '15550001234', phoneNumberId: '1' },
      {
        contacts: [{ profile: { name: 'Bench' }, wa_id: '4917000000001' }],
        messages: [
          {
            from: '4917000000001',
            id,
            timestamp: String(Math.floor(Date.now() / 1000)),
            type: 'text',
            text: { body: `event ${id}` },
          },
        ],
      },
    ),
  );

/** Sends `EVENTS` events at `RATE` per second through `post`, which resolves at acceptance. */
async function sendPaced(
  prefix: string,
  post: (id: string, b: string) => Promise<void>,
  seconds = SECONDS,
): Promise<Map<string, number>> {
  const accepted = new Map<string, number>();
  await paced(RATE, seconds, async (i) => {
    const id = `ev-${prefix}-${i}`;
    await post(id, body(id));
    accepted.set(id, performance.now());
  });
  return accepted;
}

async function latencies(accepted: Map<string, number>) {
  await waitFor(
    async () =>
      receivers.every((r) => r.requests.filter((a) => accepted.has(a.eventId ?? '')).length >= accepted.size),
    120_000,
    'every receiver got every event',
  );
  return receivers.flatMap((r) =>
    r.requests.flatMap((a) => {
      const t = accepted.get(a.eventId ?? '');
      return t === undefined ? [] : [a.at - t];
    }),
  );
}

// Raw baseline: the same bodies straight to the same receivers, one pool per receiver.
log(`raw baseline: ${EVENTS} events × ${N} receivers at ${RATE}/s`);
const pools = receivers.map((r) => new Pool(new URL(r.url).origin, { connections: 16 }));
// Latency of the baseline runs from the start of its POSTs to arrival.
const postRaw = (starts: Map<string, number>) => async (id: string, b: string) => {
  starts.set(id, performance.now());
  await Promise.all(
    pools.map(async (p) => {
      const res = await p.request({
        method: 'POST',
        path: '/hook',
        body: b,
        headers: { 'content-type': 'application/json' },
      });
      await res.body.dump();
    }),
  );
};
const rawWarmStart = new Map<string, number>();
await sendPaced('raw-warmup', postRaw(rawWarmStart), WARMUP_SECONDS);
const rawWarmup = await latencies(rawWarmStart);
for (const r of receivers) r.reset();
const rawStart = new Map<string, number>();
await sendPaced('raw', postRaw(rawStart));
const raw = await latencies(rawStart);

log(`inbox: ${EVENTS} network webhooks at ${RATE}/s → ${N} webhooks`);
for (const r of receivers) r.reset();
const gatewayPool = new Pool(url, { connections: 16 });
const postInbox = async (_id: string, b: string) => {
  const res = await gatewayPool.request({
    method: 'POST',
    path: '/api/v1/waba/webhook/',
    body: b,
    headers: {
      'content-type': 'application/json',
      'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(b).digest('hex')}`,
    },
  });
  await res.body.dump();
  if (res.statusCode !== 200) throw new Error(`gateway answered ${res.statusCode}`);
};
const inboxWarmup = await latencies(await sendPaced('inbox-warmup', postInbox, WARMUP_SECONDS));
for (const r of receivers) r.reset();
const inbox = await latencies(await sendPaced('inbox', postInbox));

const rawSummary = summarise(raw);
const inboxSummary = summarise(inbox);
process.stdout.write(
  `${JSON.stringify(
    {
      benchmark: 'fanout-end-to-end',
      machine: { cpus: cpus().length, node: process.version },
      parameters: { webhooks: N, events: EVENTS, rate_per_second: RATE, warmup_seconds: WARMUP_SECONDS },
      accepted_to_received: inboxSummary,
      raw_baseline: rawSummary,
      p50_over_raw: round(inboxSummary.p50_ms / rawSummary.p50_ms, 2),
      p99_over_raw: round(inboxSummary.p99_ms / rawSummary.p99_ms, 2),
      warmup: { accepted_to_received: summarise(inboxWarmup), raw_baseline: summarise(rawWarmup) },
    },
    null,
    2,
  )}\n`,
);

await gatewayPool.close();
await Promise.all(pools.map((p) => p.close()));
await Promise.all(receivers.map((r) => r.close()));
await Promise.all(processes.map((p) => p.stop()));
await infra.stop();
