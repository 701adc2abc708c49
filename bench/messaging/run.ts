/**
 * Messaging benchmarks on real infrastructure (nats-server, embedded PostgreSQL, the sandbox,
 * gateway and chats as their own processes):
 *
 *  ingest: signed network webhooks POSTed to the gateway; accepted per second, and the latency
 *          from POST to the message row committed by chats (p50/p99).
 *  send:   POST /api/v1/messages/ to 202 (p50/p99, per second).
 *
 * Each is printed beside a raw baseline measured in the same run with the same client and
 * concurrency: a bare Fastify server answering the same POST with no work.
 *
 *   node bench/messaging/run.ts [--messages 2000] [--concurrency 32]
 */
import { createHmac } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { messagesWebhookBody } from '@switchboard/proto';
import { sandboxSettings, startSandbox } from '@switchboard/sandbox';
import { startLocalInfra } from '@switchboard/testkit/infra';
import { freePort, repoRoot, spawnService, uniqueInstanceId, waitFor } from '@switchboard/testkit/tools';
import Fastify from 'fastify';
import pg from 'pg';
import { Pool } from 'undici';
import { round } from '../stats.ts';
import { runConcurrent, summary } from './stats.ts';

const args = parseArgs({
  options: {
    messages: { type: 'string', default: '2000' },
    concurrency: { type: 'string', default: '32' },
    // Writes V8 CPU profiles of the gateway and chats into this directory (read them with
    // bench/profile-summary.ts).
    profile: { type: 'string' },
  },
}).values;
const profileEnv = (name: string): Record<string, string> =>
  args.profile
    ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${args.profile} --cpu-prof-name=${name}.cpuprofile` }
    : {};
const N = Number(args.messages);
const C = Number(args.concurrency);

// NATS_URL / DATABASE_URL when set, else nats-server and PostgreSQL of its own.
const infra = await startLocalInfra();
const databaseUrl = await infra.createDatabase('bench_messaging');

const sandbox = await startSandbox({
  settings: sandboxSettings({ behaviour: { statusDelaysMs: { sent: 50, delivered: 100, read: 150 } } }),
});
const seed = sandbox.seed;
if (!seed) throw new Error('no sandbox seed');
const port = await freePort();
const url = `http://127.0.0.1:${port}`;
const env = {
  DATABASE_URL: databaseUrl,
  NATS_URL: infra.natsUrl,
  // Its own subjects and streams, also on a NATS given by NATS_URL.
  INSTANCE_ID: uniqueInstanceId('bench'),
  PUBLIC_URL: url,
  NETWORK_BASE_URL: sandbox.url,
  NETWORK_API_KEY: seed.apiKey,
  WABA_PHONE_NUMBER: seed.displayPhoneNumber,
  WABA_WEBHOOK_SECRET: seed.webhookSecret,
  LOG_LEVEL: 'error',
};
const gateway = spawnService(join(repoRoot, 'services/gateway/src/main.ts'), {
  ...env,
  PORT: String(port),
  INBOX_SECRET_KEY: 'bench-secret-key-0123456789abcdef0123',
  INBOX_ADMIN_USERNAME: 'bench',
  INBOX_ADMIN_PASSWORD: 'a long quiet passphrase 1',
  AUTH_MAX_FAILURES_PER_ADDRESS: '1000',
  ...profileEnv('gateway'),
});
const chats = spawnService(join(repoRoot, 'services/chats/src/main.ts'), { ...env, ...profileEnv('chats') });
await waitFor(
  async () => (await fetch(`${url}/api/v1/status/health/`).catch(() => null))?.status === 200,
  60_000,
  () => gateway.output(),
);

const client = new Pool(url, { connections: C, pipelining: 1 });
const sign = (body: string) =>
  `sha256=${createHmac('sha256', seed.webhookSecret).update(body).digest('hex')}`;
const webhookBody = (i: number, ts: number) => {
  const waId = `4917${String(i % 200).padStart(8, '0')}`;
  return JSON.stringify(
    messagesWebhookBody(
      { wabaId: 'bench', displayPhoneNumber: seed.displayPhoneNumber, phoneNumberId: seed.phoneNumberId },
      {
        contacts: [{ profile: { name: `Customer ${i % 200}` }, wa_id: waId }],
        messages: [
          {
            from: waId,
            id: `wamid.bench.${i}`,
            timestamp: String(ts),
            type: 'text',
            text: { body: `message ${i}` },
          },
        ],
      },
    ),
  );
};

async function post(
  path: string,
  body: string,
  headers: Record<string, string>,
  base = client,
): Promise<number> {
  const res = await base.request({
    method: 'POST',
    path,
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
  await res.body.dump();
  return res.statusCode;
}

// ---- raw baseline: Fastify answering the same POSTs with no work ----
const raw = Fastify({ logger: false, bodyLimit: 4 * 1024 * 1024 });
raw.post('/api/v1/waba/webhook/', async () => ({ status: 'accepted' }));
raw.post('/api/v1/messages/', async (_req, reply) => reply.status(202).send({ id: 'x' }));
await raw.listen({ host: '127.0.0.1', port: 0 });
const rawAddr = raw.server.address();
if (!rawAddr || typeof rawAddr === 'string') throw new Error('no raw port');
const rawClient = new Pool(`http://127.0.0.1:${rawAddr.port}`, { connections: C, pipelining: 1 });

async function measure(
  label: string,
  base: Pool,
  path: string,
  body: (i: number) => string,
  headers: (b: string) => Record<string, string>,
) {
  // Warm-up, not measured.
  await runConcurrent(Math.min(200, N), C, async (i) => {
    const b = body(N + 100_000 + i);
    await post(path, b, headers(b), base);
  });
  const t0 = performance.now();
  const statuses: number[] = [];
  const durations = await runConcurrent(N, C, async (i) => {
    const b = body(i);
    statuses.push(await post(path, b, headers(b), base));
  });
  const elapsed = performance.now() - t0;
  const bad = statuses.filter((s) => s >= 300).length;
  if (bad) throw new Error(`${label}: ${bad} requests failed`);
  return { ...summary(durations, elapsed), elapsedMs: elapsed };
}

const now = Math.floor(Date.now() / 1000);
const sentAt = new Map<string, number>();
const rawIngest = await measure(
  'raw ingest',
  rawClient,
  '/api/v1/waba/webhook/',
  (i) => webhookBody(i, now),
  () => ({}),
);
const ingestStart = Date.now();
const ingest = await measure(
  'ingest',
  client,
  '/api/v1/waba/webhook/',
  (i) => {
    if (i < N) sentAt.set(`wamid.bench.${i}`, Date.now());
    return webhookBody(i, now);
  },
  (b) => ({ 'x-hub-signature-256': sign(b) }),
);
const db = new pg.Client({ connectionString: databaseUrl });
await db.connect();
await waitFor(
  async () =>
    Number(
      (await db.query("select count(*)::int as n from messages where wamid like 'wamid.bench.%'")).rows[0]?.n,
    ) >=
    N + Math.min(200, N),
  300_000,
  'all webhooks stored',
);
const stored = await db.query<{ wamid: string; created_at: Date }>(
  "select wamid, created_at from messages where wamid like 'wamid.bench.%'",
);
const storeLatencies = stored.rows.flatMap((r) => {
  const t = sentAt.get(r.wamid);
  return t === undefined ? [] : [r.created_at.getTime() - t];
});
const lastStored = Math.max(
  ...stored.rows.filter((r) => sentAt.has(r.wamid)).map((r) => r.created_at.getTime()),
);
const persisted = summary(storeLatencies, lastStored - ingestStart);

// ---- send: POST /messages/ to 202 ----
const login = await fetch(`${url}/api/v1/auth/token/`, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ username: 'bench', password: 'a long quiet passphrase 1' }),
});
const { token } = (await login.json()) as { token: string };
const sendBody = (i: number) =>
  JSON.stringify({
    wa_id: `4917${String(i % 200).padStart(8, '0')}`,
    type: 'text',
    text: { body: `reply ${i}` },
  });
const rawSend = await measure('raw send', rawClient, '/api/v1/messages/', sendBody, () => ({}));
const send = await measure('send', client, '/api/v1/messages/', sendBody, () => ({
  authorization: `Token ${token}`,
}));

const result = {
  benchmark: 'messaging',
  machine: { cpus: (await import('node:os')).cpus().length, node: process.version },
  parameters: { messages: N, concurrency: C },
  ingest: {
    accepted: { per_second: ingest.per_second, p50_ms: ingest.p50_ms, p99_ms: ingest.p99_ms },
    persisted: { per_second: persisted.per_second, p50_ms: persisted.p50_ms, p99_ms: persisted.p99_ms },
    raw_baseline: { per_second: rawIngest.per_second, p50_ms: rawIngest.p50_ms, p99_ms: rawIngest.p99_ms },
    ratio_accepted_to_raw: round(ingest.per_second / rawIngest.per_second, 3),
  },
  send: {
    accepted_202: { per_second: send.per_second, p50_ms: send.p50_ms, p99_ms: send.p99_ms },
    raw_baseline: { per_second: rawSend.per_second, p50_ms: rawSend.p50_ms, p99_ms: rawSend.p99_ms },
    ratio_to_raw: round(send.per_second / rawSend.per_second, 3),
  },
};
process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
await mkdir(join(repoRoot, 'bench/results'), { recursive: true });
await writeFile(join(repoRoot, 'bench/results/messaging.json'), `${JSON.stringify(result, null, 2)}\n`);

await db.end();
await client.close();
await rawClient.close();
await raw.close();
await Promise.all([gateway.stop(), chats.stop()]);
await sandbox.close();
await infra.stop();
