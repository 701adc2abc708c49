/**
 * `npm run chaos`: proves that nothing the inbox accepted is lost while its parts are killed.
 *
 * Starts the product as a user does (`npm start`, its own SWITCHBOARD_HOME and INBOX_PORT),
 * with the network being a sandbox in this process (it outlives every kill and keeps retrying
 * its webhooks every second for 15 minutes, as the real network retries for days). Three
 * per-user webhooks point at receivers in this process. Under a paced load of customer
 * messages and sends, it SIGKILLs chats, fanout, gateway, nats-server and PostgreSQL one after
 * another, then two at once, then presses Ctrl-C and starts `npm start` again on the same
 * home; after each step it waits for recovery (health 200 and a fresh message stored). Then it
 * waits for everything to settle and counts by wamid what the network delivered, what the
 * database holds, what each webhook received, and what the network received of every send
 * answered 202. One JSON object on stdout; progress on stderr; exit 1 when anything is lost.
 *
 *   npm run chaos -- [--messages 10000] [--sends 1000] [--duration 240] [--keep]
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, readFileSync, statSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { sandboxSettings, startSandbox, type WebhookDelivery } from '@switchboard/sandbox';
import { freePort } from '@switchboard/testkit/infra';
import pg from 'pg';
import { processesOfHome, type Role, rolesUnder } from './procs.ts';
import { type Receiver, startReceiver } from './receivers.ts';

const repoRoot = resolve(import.meta.dirname, '../..');

const { values: opts } = parseArgs({
  options: {
    messages: { type: 'string', default: '10000' },
    sends: { type: 'string', default: '1000' },
    customers: { type: 'string' },
    duration: { type: 'string' },
    'recovery-timeout': { type: 'string', default: '180' },
    'settle-timeout': { type: 'string', default: '900' },
    'stall-timeout': { type: 'string', default: '420' },
    'log-level': { type: 'string', default: 'warn' },
    keep: { type: 'boolean', default: false },
  },
});
const positive = (name: string, raw: string | undefined, fallback: number): number => {
  const n = raw === undefined ? fallback : Number(raw);
  if (!Number.isFinite(n) || n < 0) throw new Error(`--${name} must be a non-negative number, not "${raw}"`);
  return n;
};
const MESSAGES = Math.floor(positive('messages', opts.messages, 10_000));
const SENDS = Math.floor(positive('sends', opts.sends, 1_000));
const CUSTOMERS = Math.max(
  1,
  Math.floor(positive('customers', opts.customers, Math.max(10, Math.min(500, Math.floor(MESSAGES / 20))))),
);
// Load is spread over this many seconds; the chaos steps are spread over the same window.
const DURATION_S = Math.round(
  positive('duration', opts.duration, Math.min(240, Math.max(60, MESSAGES / 45))),
);
const RECOVERY_TIMEOUT_MS = positive('recovery-timeout', opts['recovery-timeout'], 180) * 1000;
const SETTLE_TIMEOUT_MS = positive('settle-timeout', opts['settle-timeout'], 900) * 1000;
const STALL_TIMEOUT_MS = positive('stall-timeout', opts['stall-timeout'], 420) * 1000;

const t0 = Date.now();
const say = (line: string) =>
  process.stderr.write(`[chaos ${((Date.now() - t0) / 1000).toFixed(1)}s] ${line}\n`);
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, Math.max(0, ms)));
const runId = Date.now().toString(36);

// ---------------------------------------------------------------- the network, in this process

// The network retries a webhook it could not deliver every second for 15 minutes.
const sandbox = await startSandbox({
  settings: sandboxSettings({
    behaviour: { templateOpensWindow: true },
    webhookRetryScheduleMs: Array.from({ length: 900 }, () => 1_000),
  }),
});
const seedNumber = sandbox.state.seed;
const seed = sandbox.seed;
if (!seedNumber || !seed) throw new Error('the sandbox has no seed number');
// The sandbox keeps only its last 2,000 webhook deliveries (GET /sandbox/webhook-deliveries);
// a run posts far more, so every delivery is remembered here as the sandbox records it.
const deliveries = new Map<string, WebhookDelivery>();
{
  const list = seedNumber.deliveries;
  const push = list.push;
  list.push = (...items: WebhookDelivery[]) => {
    for (const d of items) deliveries.set(d.id, d);
    return push.apply(list, items);
  };
}

const receivers: Receiver[] = [];
for (const name of ['hook-a', 'hook-b', 'hook-c']) receivers.push(await startReceiver(name));

// ---------------------------------------------------------------- the product, as a user starts it

const runDir = await mkdtemp(join(tmpdir(), 'switchboard-chaos-'));
// Run as root, PostgreSQL runs as `postgres`, which must be able to enter the home.
await chmod(runDir, 0o755);
const home = join(runDir, 'home');
await mkdir(home, { mode: 0o755 });
await chmod(home, 0o755);
const inboxPort = await freePort();
const inboxUrl = `http://127.0.0.1:${inboxPort}`;

const productEnv: NodeJS.ProcessEnv = { ...process.env };
for (const k of ['DATABASE_URL', 'NATS_URL', 'INSTANCE_ID', 'HOST', 'PORT', 'INBOX_SECRET_KEY'])
  delete productEnv[k];
Object.assign(productEnv, {
  SWITCHBOARD_HOME: home,
  INBOX_PORT: String(inboxPort),
  NETWORK_BASE_URL: sandbox.url,
  NETWORK_API_KEY: seed.apiKey,
  WABA_WEBHOOK_SECRET: seed.webhookSecret,
  WABA_PHONE_NUMBER: seed.displayPhoneNumber,
  PUBLIC_URL: inboxUrl,
  LOG_LEVEL: opts['log-level'],
  PATH: `${process.env.PATH ?? ''}:/usr/sbin`,
});

interface Product {
  readonly n: number;
  readonly child: ChildProcess;
  readonly pid: number;
  readonly log: string;
  readonly startedAt: number;
  readyAt: number | undefined;
  readonly exited: Promise<{ code: number | null; signal: string | null }>;
  exitedAt: number | undefined;
}

interface Local {
  inbox: { url: string; admin: { username: string; password: string } };
  database_url: string;
}

const logs: string[] = [];
let product: Product | undefined;
let local: Local | undefined;

function logTail(p: Product, lines = 30): string {
  try {
    return readFileSync(p.log, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

function launch(n: number): Product {
  const log = join(runDir, `npm-start-${n}.log`);
  logs.push(log);
  // Its own process group, like a shell job: Ctrl-C goes to the whole group.
  const child = spawn('npm', ['start'], {
    cwd: repoRoot,
    env: productEnv,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (child.pid === undefined) throw new Error('npm start could not be spawned');
  // Every line with the time it was printed, so the log lines up with the steps.
  const out = createWriteStream(log, { flags: 'a' });
  for (const stream of [child.stdout, child.stderr]) {
    if (!stream) continue;
    createInterface({ input: stream }).on('line', (line) => {
      out.write(`${new Date().toISOString().slice(11, 23)} ${line}\n`);
    });
  }
  child.once('exit', () => setTimeout(() => out.end(), 500));
  const p: Product = {
    n,
    child,
    pid: child.pid,
    log,
    startedAt: Date.now(),
    readyAt: undefined,
    exitedAt: undefined,
    exited: new Promise((r) =>
      child.once('exit', (code, signal) => {
        p.exitedAt = Date.now();
        r({ code, signal });
      }),
    ),
  };
  return p;
}

async function health(timeoutMs = 2_000): Promise<number> {
  try {
    const res = await fetch(`${inboxUrl}/api/v1/status/health/`, { signal: AbortSignal.timeout(timeoutMs) });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return 0;
  }
}

/** Starts `npm start` and waits until it wrote local.json for this run and the inbox is healthy. */
async function startProduct(n: number): Promise<Product> {
  const p = launch(n);
  product = p;
  say(`npm start #${n}: pid ${p.pid}, log ${p.log}`);
  const file = join(home, 'local.json');
  const deadline = Date.now() + 180_000;
  for (;;) {
    if (p.exitedAt !== undefined) throw new Error(`npm start #${n} exited while starting:\n${logTail(p)}`);
    if (Date.now() > deadline) throw new Error(`npm start #${n} not ready within 180 s:\n${logTail(p)}`);
    let fresh = false;
    try {
      fresh = statSync(file).mtimeMs >= p.startedAt;
    } catch {
      // Not written yet.
    }
    if (fresh && (await health()) === 200) break;
    await sleep(250);
  }
  p.readyAt = Date.now();
  local = JSON.parse(readFileSync(file, 'utf8')) as Local;
  if (local.inbox.url !== inboxUrl)
    throw new Error(`the inbox listens on ${local.inbox.url}, not ${inboxUrl}`);
  say(`npm start #${n} ready after ${Date.now() - p.startedAt} ms`);
  return p;
}

// ---------------------------------------------------------------- database

let dbClient: pg.Client | undefined;
let dbClientUrl: string | undefined;
async function sql<T extends pg.QueryResultRow>(text: string, params: unknown[] = []): Promise<T[]> {
  if (!local) throw new Error('no local.json yet');
  if (dbClient && dbClientUrl !== local.database_url) {
    void dbClient.end().catch(() => undefined);
    dbClient = undefined;
  }
  try {
    if (!dbClient) {
      const c = new pg.Client({
        connectionString: local.database_url,
        connectionTimeoutMillis: 3_000,
        query_timeout: 30_000,
      });
      c.on('error', () => undefined);
      await c.connect();
      dbClient = c;
      dbClientUrl = local.database_url;
    }
    return (await dbClient.query<T>(text, params)).rows;
  } catch (err) {
    void dbClient?.end().catch(() => undefined);
    dbClient = undefined;
    throw err;
  }
}

async function chunked<T extends pg.QueryResultRow>(text: string, all: readonly string[]): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < all.length; i += 5_000) out.push(...(await sql<T>(text, [all.slice(i, i + 5_000)])));
  return out;
}

// ---------------------------------------------------------------- inbox API

let token: string | undefined;
async function login(): Promise<string> {
  const deadline = Date.now() + 300_000;
  for (;;) {
    try {
      const res = await fetch(`${inboxUrl}/api/v1/auth/token/`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(local?.inbox.admin),
        signal: AbortSignal.timeout(20_000),
      });
      const body = (await res.json().catch(() => ({}))) as { token?: string };
      if (res.status === 200 && body.token) {
        token = body.token;
        return body.token;
      }
      if (res.status < 500 && res.status !== 429) throw new Error(`login answered ${res.status}`);
    } catch (err) {
      if (err instanceof Error && err.message.startsWith('login answered')) throw err;
    }
    if (Date.now() > deadline) throw new Error('could not log in within 300 s');
    await sleep(1_000);
  }
}

async function api(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${inboxUrl}${path}`, {
    method,
    headers: {
      ...(body !== undefined && { 'content-type': 'application/json' }),
      authorization: `Token ${token ?? (await login())}`,
      ...headers,
    },
    ...(body !== undefined && { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: res.status, json };
}

// ---------------------------------------------------------------- customers (the network's control API)

type InboundKind = 'seed' | 'load' | 'probe';
/** Every customer message the network accepted, by wamid. */
const inbound = new Map<string, { waId: string; kind: InboundKind; at: number }>();
let inboundPostFailures = 0;

const customerIds = Array.from({ length: CUSTOMERS }, (_, i) => `4917${String(i).padStart(9, '0')}`);
const PROBE_CUSTOMER = '4916999999999';

async function customerSays(waId: string, text: string, kind: InboundKind): Promise<string> {
  for (let attempt = 0; ; attempt++) {
    try {
      const res = await fetch(`${sandbox.url}/sandbox/customers/${waId}/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          type: 'text',
          text: { body: text },
          profile_name: `Customer ${waId.slice(-4)}`,
        }),
      });
      const body = (await res.json()) as { id?: string };
      if (res.status === 200 && body.id) {
        inbound.set(body.id, { waId, kind, at: Date.now() });
        return body.id;
      }
      throw new Error(`the sandbox answered ${res.status}: ${JSON.stringify(body)}`);
    } catch (err) {
      inboundPostFailures++;
      if (attempt >= 5) throw err;
      await sleep(200);
    }
  }
}

// ---------------------------------------------------------------- sends

interface SendRecord {
  readonly index: number;
  readonly key: string;
  readonly waId: string;
  state: 'pending' | 'accepted' | 'rejected' | 'gave_up';
  requests: number;
  messageId: string | undefined;
  /** Message ids answered with 202 for this key: more than one would break idempotency. */
  readonly ids: Set<string>;
  lastError: string | undefined;
}
const sends: SendRecord[] = [];
const sendRetriesBy = new Map<string, number>();

async function sendOne(index: number): Promise<void> {
  const waId = customerIds[index % customerIds.length] as string;
  const rec: SendRecord = {
    index,
    key: `chaos-${runId}-${index}`,
    waId,
    state: 'pending',
    requests: 0,
    messageId: undefined,
    ids: new Set(),
    lastError: undefined,
  };
  sends.push(rec);
  let key = rec.key;
  const body = { wa_id: waId, type: 'text', text: { body: `chaos send ${rec.key}` } };
  const deadline = Date.now() + 15 * 60_000;
  for (let attempt = 0; ; attempt++) {
    rec.requests++;
    let why: string;
    try {
      const res = await api('POST', '/api/v1/messages/', body, { 'idempotency-key': key });
      const json = res.json as { id?: string; idempotency_key?: string } | string;
      if (res.status === 202 && typeof json === 'object' && json.id) {
        rec.ids.add(json.id);
        rec.messageId ??= json.id;
        rec.state = 'accepted';
        return;
      }
      if (res.status === 401) {
        token = undefined;
        why = '401';
      } else if (res.status >= 500 || res.status === 429) {
        // A 503 may name the key under which the inbox stored the attempt: retry with it.
        if (typeof json === 'object' && json.idempotency_key) key = json.idempotency_key;
        why = String(res.status);
      } else {
        rec.state = 'rejected';
        rec.lastError = `${res.status} ${JSON.stringify(json).slice(0, 300)}`;
        return;
      }
    } catch (err) {
      why =
        err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);
      why = why.slice(0, 60);
    }
    sendRetriesBy.set(why, (sendRetriesBy.get(why) ?? 0) + 1);
    rec.lastError = why;
    if (Date.now() > deadline) {
      rec.state = 'gave_up';
      return;
    }
    await sleep(Math.min(3_000, 250 * 2 ** Math.min(attempt, 4)));
  }
}

// ---------------------------------------------------------------- paced load

/**
 * Starts `one(i)` for i = 0… at an even pace, `count` over `durationMs`, then on at the same
 * pace while `more()` (the chaos steps are still running: every step happens under load).
 */
async function paced(
  count: number,
  durationMs: number,
  limit: number,
  one: (i: number) => Promise<unknown>,
  more: () => boolean,
): Promise<{ started: number; ms: number }> {
  const start = Date.now();
  const interval = durationMs / Math.max(1, count);
  const inflight = new Set<Promise<unknown>>();
  let i = 0;
  for (; i < count || more(); i++) {
    await sleep(start + i * interval - Date.now());
    const p: Promise<unknown> = one(i)
      .catch((err: unknown) => say(`load item ${i} failed: ${String(err)}`))
      .finally(() => inflight.delete(p));
    inflight.add(p);
    while (inflight.size >= limit) await Promise.race(inflight);
  }
  await Promise.all(inflight);
  return { started: i, ms: Date.now() - start };
}

// ---------------------------------------------------------------- chaos steps

interface StepResult {
  step: string;
  at_s: number;
  /** `role pid` of each process killed. */
  killed: string[];
  recovered: boolean;
  /** Kill (or Ctrl-C) → health 200 and a message posted after the kill stored. */
  recovery_ms: number | undefined;
  health_200_ms: number | undefined;
  health_down_ms: number;
  stored_ms: number | undefined;
  /** …and that message at every webhook. */
  webhooks_ms: number | undefined;
  probe: string;
  /** `role pid` of the processes found in their place afterwards. */
  restarted: string[];
  error?: string;
  ctrl_c?: {
    stop_ms: number | undefined;
    exit: { code: number | null; signal: string | null } | 'timeout';
    stop_log: string[];
    leftovers_at_exit: string[];
    leftovers_after_15s: string[];
    restart_ms: number;
  };
}

const steps: StepResult[] = [];

async function probeStored(wamid: string): Promise<boolean> {
  try {
    return (await sql('select 1 from messages where wamid = $1', [wamid])).length > 0;
  } catch {
    return false;
  }
}

/**
 * Polls health, the probe in the database and at the webhooks. `seen`: health already watched
 * by the caller (Ctrl-C: down while stopped, up when the new start was ready).
 */
async function awaitRecovery(r: StepResult, from: number, seen?: { downMs: number; upAt: number }) {
  const deadline = from + RECOVERY_TIMEOUT_MS;
  let lastDownAt = seen ? seen.upAt - 1 : undefined;
  let up = seen?.upAt;
  if (seen) r.health_down_ms = seen.downMs;
  let lastCheck = from;
  let storedAt: number | undefined;
  for (;;) {
    const status = await health();
    const now = Date.now();
    if (status !== 200) {
      r.health_down_ms += now - lastCheck;
      lastDownAt = now;
      up = undefined;
    } else {
      up ??= now;
    }
    lastCheck = now;
    if (storedAt === undefined && (await probeStored(r.probe))) storedAt = Date.now();
    const hooks = receivers.map((h) => h.firstSeen.get(r.probe));
    const hooksAt = hooks.every((t) => t !== undefined) ? Math.max(...(hooks as number[])) : undefined;
    if (storedAt !== undefined && up !== undefined && r.recovery_ms === undefined) {
      r.recovered = true;
      r.health_200_ms = (lastDownAt === undefined ? from : up) - from;
      r.stored_ms = storedAt - from;
      r.recovery_ms = Math.max(r.health_200_ms, r.stored_ms);
      say(
        `  ${r.step}: recovered in ${r.recovery_ms} ms (health ${r.health_200_ms} ms, stored ${r.stored_ms} ms)`,
      );
    }
    if (hooksAt !== undefined) r.webhooks_ms = hooksAt - from;
    if (r.recovered && r.webhooks_ms !== undefined) return;
    if (Date.now() > deadline) {
      say(
        `  ${r.step}: NOT recovered within ${RECOVERY_TIMEOUT_MS} ms (health ${status}, stored ${storedAt !== undefined}, webhooks ${hooks.map((t) => t !== undefined).join('/')})`,
      );
      return;
    }
    await sleep(250);
  }
}

function newStep(step: string): StepResult {
  return {
    step,
    at_s: Math.round((Date.now() - t0) / 100) / 10,
    killed: [],
    recovered: false,
    recovery_ms: undefined,
    health_200_ms: undefined,
    health_down_ms: 0,
    stored_ms: undefined,
    webhooks_ms: undefined,
    probe: '',
    restarted: [],
  };
}

async function killStep(name: string, roles: Role[]): Promise<StepResult> {
  const r = newStep(name);
  steps.push(r);
  if (!product) throw new Error('no product');
  const found = rolesUnder(product.pid);
  const targets = roles.flatMap((role) => (found.get(role) ?? []).map((pid) => ({ role, pid })));
  const missing = roles.filter((role) => !found.get(role)?.length);
  if (missing.length > 0) r.error = `no ${missing.join(', ')} process among the descendants of npm start`;
  const from = Date.now();
  for (const t of targets) {
    try {
      process.kill(t.pid, 'SIGKILL');
      r.killed.push(`${t.role} ${t.pid}`);
    } catch (err) {
      r.error = `${r.error ?? ''} kill ${t.role} ${t.pid}: ${String(err)}`.trim();
    }
  }
  say(`step ${name}: SIGKILL ${r.killed.join(', ')}`);
  r.probe = await customerSays(PROBE_CUSTOMER, `chaos probe after ${name}`, 'probe');
  await awaitRecovery(r, from);
  const after = rolesUnder(product.pid);
  r.restarted = roles.flatMap((role) => (after.get(role) ?? []).map((pid) => `${role} ${pid}`));
  return r;
}

function stopLines(p: Product): string[] {
  try {
    const lines = readFileSync(p.log, 'utf8').split('\n');
    const from = lines.findLastIndex((l) => l.includes('stopping'));
    return from < 0
      ? []
      : lines
          .slice(from)
          .filter((l) => l.trim())
          .slice(0, 60);
  } catch {
    return [];
  }
}

async function ctrlC(p: Product, timeoutMs = 120_000) {
  const from = Date.now();
  try {
    process.kill(-p.pid, 'SIGINT');
  } catch {
    // Already gone.
  }
  let downSince: number | undefined;
  const watching = (async () => {
    while (p.exitedAt === undefined && Date.now() - from < timeoutMs) {
      if (downSince === undefined && (await health(1_000)) !== 200) downSince = Date.now();
      await sleep(100);
    }
  })();
  const exit = await Promise.race([p.exited, sleep(timeoutMs).then(() => 'timeout' as const)]);
  await watching;
  const stopMs = exit === 'timeout' ? undefined : (p.exitedAt ?? Date.now()) - from;
  await sleep(1_000);
  const ours = new Set([process.pid]);
  const atExit = processesOfHome(home, ours).map((x) => `${x.role} ${x.pid}`);
  let after = atExit;
  for (let i = 0; i < 14 && after.length > 0; i++) {
    await sleep(1_000);
    after = processesOfHome(home, ours).map((x) => `${x.role} ${x.pid}`);
  }
  if (exit === 'timeout') {
    try {
      process.kill(-p.pid, 'SIGKILL');
    } catch {
      // Gone.
    }
  }
  // Whatever is still there belongs to this run: stop it so the next start is clean.
  for (const x of after) {
    try {
      process.kill(Number(x.split(' ').at(-1)), 'SIGKILL');
    } catch {
      // Gone.
    }
  }
  return { exit, stopMs, atExit, after, downSince: downSince ?? p.exitedAt ?? Date.now() };
}

async function ctrlCStep(): Promise<StepResult> {
  const r = newStep('ctrl-c + npm start');
  steps.push(r);
  if (!product) throw new Error('no product');
  const old = product;
  const from = Date.now();
  say(`step ${r.step}: SIGINT to process group ${old.pid}`);
  r.probe = await customerSays(PROBE_CUSTOMER, 'chaos probe after ctrl-c', 'probe');
  const { exit, stopMs, atExit, after, downSince } = await ctrlC(old);
  say(
    `  npm start #${old.n} ${exit === 'timeout' ? 'did NOT exit' : `exited (${JSON.stringify(exit)}) after ${stopMs} ms`}; leftovers ${atExit.length} then ${after.length}`,
  );
  const restartFrom = Date.now();
  try {
    await startProduct(old.n + 1);
  } catch (err) {
    r.error = String(err);
    say(`  restart failed: ${String(err)}`);
  }
  r.ctrl_c = {
    stop_ms: stopMs,
    exit,
    stop_log: stopLines(old),
    leftovers_at_exit: atExit,
    leftovers_after_15s: after,
    restart_ms: Date.now() - restartFrom,
  };
  const upAt = product.readyAt;
  if (!r.error && upAt !== undefined) await awaitRecovery(r, from, { downMs: upAt - downSince, upAt });
  return r;
}

// ---------------------------------------------------------------- settling and counting

interface StatusPair {
  wamid: string;
  status: string;
}
const parsedStatuses = new Map<string, StatusPair[]>();
function statusPairs(d: WebhookDelivery): StatusPair[] {
  let pairs = parsedStatuses.get(d.id);
  if (!pairs) {
    pairs = [];
    try {
      const body = JSON.parse(d.body) as {
        entry?: Array<{ changes?: Array<{ value?: { statuses?: Array<{ id: string; status: string }> } }> }>;
      };
      for (const e of body.entry ?? [])
        for (const c of e.changes ?? [])
          for (const s of c.value?.statuses ?? []) pairs.push({ wamid: s.id, status: s.status });
    } catch {
      // Not a status body.
    }
    parsedStatuses.set(d.id, pairs);
  }
  return pairs;
}

/** When the network accepted each wamid (POSIX seconds, its own clock). */
const acceptedAt = new Map<string, number>();

async function networkReceived(): Promise<Map<string, string[]>> {
  // Key of each send → network wamids carrying it (more than one: sent twice).
  const byKey = new Map<string, string[]>();
  const queue = [...customerIds];
  const worker = async () => {
    for (let waId = queue.shift(); waId; waId = queue.shift()) {
      const res = await fetch(`${sandbox.url}/sandbox/customers/${waId}/received`);
      const body = (await res.json()) as {
        messages: Array<{ id: string; accepted_at: number; message: { text?: { body?: string } } }>;
      };
      for (const m of body.messages) {
        acceptedAt.set(m.id, m.accepted_at);
        const key = /^chaos send (\S+)$/.exec(m.message.text?.body ?? '')?.[1];
        if (key) byKey.set(key, [...(byKey.get(key) ?? []), m.id]);
      }
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  return byKey;
}

const sample = (xs: Iterable<string>, n = 10) => [...xs].slice(0, n);

/**
 * Exits the supervisor reported that this run did not cause (anything but SIGKILL), each with
 * the error the process printed last before it: crashes that the restart hides.
 */
function unexpectedExits(): Array<{ log: string; at: string; service: string; exit: string; error: string }> {
  const out: Array<{ log: string; at: string; service: string; exit: string; error: string }> = [];
  for (const log of logs) {
    let lines: string[];
    try {
      lines = readFileSync(log, 'utf8').split('\n');
    } catch {
      continue;
    }
    const lastError = new Map<string, string>();
    for (const line of lines) {
      const err = /^\S+ \[([\w-]+)\] +((?:\w*Error|error)(?: \[\w+\])?: .*)$/.exec(line);
      if (err?.[1] && err[2]) lastError.set(err[1], err[2].slice(0, 200));
      const exit = /^(\S+) \[([\w-]+)\] exited \((.+?)\); restarting/.exec(line);
      if (!exit?.[2] || exit[3] === 'SIGKILL') continue;
      out.push({
        log: log.slice(runDir.length + 1),
        at: exit[1] ?? '',
        service: exit[2],
        exit: exit[3] ?? '',
        error: lastError.get(exit[2]) ?? '',
      });
      lastError.delete(exit[2]);
    }
  }
  return out;
}

async function count() {
  const inboundWamids = [...inbound.keys()];
  const netState = new Map<string, WebhookDelivery['state']>();
  const statusDeliveries: WebhookDelivery[] = [];
  let pendingAtNetwork = 0;
  for (const d of deliveries.values()) {
    if (d.state === 'pending') pendingAtNetwork++;
    if (d.kind === 'messages') for (const w of d.refs) netState.set(w, d.state);
    else statusDeliveries.push(d);
  }
  const delivered = inboundWamids.filter((w) => netState.get(w) === 'delivered');
  const neverAccepted = inboundWamids.filter((w) => netState.get(w) !== 'delivered');
  const dbRows = await chunked<{ wamid: string }>(
    'select wamid from messages where wamid = any($1::text[]) and not from_us',
    inboundWamids,
  );
  const inDb = new Set(dbRows.map((r) => r.wamid));
  const inboundToDb = delivered.filter((w) => !inDb.has(w));
  const dbToWebhook = Object.fromEntries(
    receivers.map((h) => [h.name, [...inDb].filter((w) => !h.messages.has(w))]),
  );

  // Statuses the network delivered → message_statuses → every webhook.
  const netPairs = new Set<string>();
  for (const d of statusDeliveries)
    if (d.state === 'delivered') for (const p of statusPairs(d)) netPairs.add(`${p.wamid}:${p.status}`);
  const statusWamids = [...new Set([...netPairs].map((p) => p.slice(0, p.lastIndexOf(':'))))];
  const dbStatusRows = await chunked<{ pair: string }>(
    "select wamid || ':' || status as pair from message_statuses where wamid = any($1::text[])",
    statusWamids,
  );
  const dbPairs = new Set(dbStatusRows.map((r) => r.pair));
  const statusesToDb = [...netPairs].filter((p) => !dbPairs.has(p));
  const dbNetPairs = [...netPairs].filter((p) => dbPairs.has(p));
  const statusesToWebhook = Object.fromEntries(
    receivers.map((h) => [h.name, dbNetPairs.filter((p) => !h.statuses.has(p))]),
  );

  // Sends: 202 → messages row → the network.
  const accepted = sends.filter((s) => s.state === 'accepted');
  const sendRows = await chunked<{ id: string; wamid: string | null; send_state: string | null }>(
    'select id::text as id, wamid, send_state from messages where id = any($1::uuid[])',
    accepted.map((s) => s.messageId as string),
  );
  const rowById = new Map(sendRows.map((r) => [r.id, r]));
  const network = await networkReceived();
  const sendsToDb = accepted.filter((s) => !rowById.has(s.messageId as string));
  const sendsToNetwork = accepted.filter((s) => !network.has(s.key));
  const duplicates = [...network.entries()].filter(([, ids]) => ids.length > 1);
  const dbState: Record<string, number> = {};
  let wamidMismatch = 0;
  for (const s of accepted) {
    const row = rowById.get(s.messageId as string);
    const st = row?.send_state ?? 'missing';
    dbState[st] = (dbState[st] ?? 0) + 1;
    if (row?.wamid && !(network.get(s.key) ?? []).includes(row.wamid)) wamidMismatch++;
  }
  const pendingSends = sends.filter((s) => s.state === 'pending').length;
  const settled =
    pendingAtNetwork === 0 &&
    pendingSends === 0 &&
    inboundToDb.length === 0 &&
    neverAccepted.length === 0 &&
    Object.values(dbToWebhook).every((l) => l.length === 0) &&
    statusesToDb.length === 0 &&
    Object.values(statusesToWebhook).every((l) => l.length === 0) &&
    sendsToDb.length === 0 &&
    (dbState.queued ?? 0) === 0 &&
    sendsToNetwork.length === 0;
  return {
    settled,
    pendingAtNetwork,
    inboundWamids,
    delivered,
    neverAccepted,
    inDb,
    inboundToDb,
    dbToWebhook,
    netPairs,
    dbPairs,
    statusesToDb,
    statusesToWebhook,
    accepted,
    sendRows,
    sendsToDb,
    sendsToNetwork,
    network,
    duplicates,
    dbState,
    wamidMismatch,
    pendingSends,
  };
}
type Counts = Awaited<ReturnType<typeof count>>;

function progressLine(c: Counts): string {
  const hooks = receivers.map((h) => `${h.name} ${c.inDb.size - (c.dbToWebhook[h.name]?.length ?? 0)}`);
  return (
    `inbound ${c.inboundWamids.length} posted, ${c.delivered.length} delivered, ${c.inDb.size} in db, ` +
    `${hooks.join(', ')}; network pending ${c.pendingAtNetwork}; sends ${c.accepted.length} accepted, ` +
    `db ${JSON.stringify(c.dbState)}, ${c.network.size} at network; statuses ${c.netPairs.size}/${c.dbPairs.size}`
  );
}

async function settle(): Promise<{ counts: Counts; settled: boolean; waited_ms: number }> {
  const from = Date.now();
  let last = '';
  let lastChange = Date.now();
  for (;;) {
    let counts: Counts | undefined;
    try {
      counts = await count();
    } catch (err) {
      say(`counting failed (${String(err)}); trying again`);
    }
    if (counts) {
      const line = progressLine(counts);
      if (line !== last) {
        last = line;
        lastChange = Date.now();
        say(`settling: ${line}`);
      }
      if (counts.settled) return { counts, settled: true, waited_ms: Date.now() - from };
      const stalled = Date.now() - lastChange > STALL_TIMEOUT_MS;
      if (Date.now() - from > SETTLE_TIMEOUT_MS || stalled) {
        say(stalled ? `nothing changed for ${STALL_TIMEOUT_MS / 1000} s` : 'settle deadline passed');
        return { counts, settled: false, waited_ms: Date.now() - from };
      }
    }
    await sleep(5_000);
  }
}

// ---------------------------------------------------------------- the run

let finalExit = 1;
let stopping = false;
async function shutdownProduct(): Promise<unknown> {
  if (!product || product.exitedAt !== undefined) return undefined;
  const { exit, stopMs, atExit, after } = await ctrlC(product);
  return { exit, stop_ms: stopMs, leftovers_at_exit: atExit, leftovers_after_15s: after };
}
process.on('SIGINT', () => {
  if (stopping) return;
  stopping = true;
  say('interrupted: stopping npm start');
  void shutdownProduct().finally(() => process.exit(130));
});
process.on('exit', () => {
  // Never leave a product running behind a crashed chaos run.
  if (product && product.exitedAt === undefined) {
    try {
      process.kill(-product.pid, 'SIGINT');
    } catch {
      // Gone.
    }
  }
});

try {
  say(
    `run ${runId}: ${MESSAGES} messages from ${CUSTOMERS} customers and ${SENDS} sends over ${DURATION_S} s; home ${home}`,
  );
  await startProduct(1);
  await login();

  // Three per-user webhooks of the admin, created through the inbox API.
  for (const r of receivers) {
    const res = await api('POST', '/api/v1/webhooks/waba/', { url: r.url });
    const json = res.json as { secret?: string; id?: string };
    if (res.status !== 201 || !json.secret)
      throw new Error(`creating a webhook answered ${res.status}: ${JSON.stringify(res.json)}`);
    r.secret = json.secret;
  }
  // chats registers the inbox's webhook URL with the network at start.
  const deadline = Date.now() + 60_000;
  while (seedNumber.webhook?.url !== `${inboxUrl}/api/v1/waba/webhook/`) {
    if (Date.now() > deadline)
      throw new Error(`chats did not register its webhook URL (${seedNumber.webhook?.url})`);
    await sleep(250);
  }

  // Every customer writes once (opening the care window the sends need); all of it must reach
  // the database and every webhook before the chaos starts.
  say(`${CUSTOMERS} customers write their first message`);
  const seeded = await Promise.all(customerIds.map((w) => customerSays(w, `chaos hello from ${w}`, 'seed')));
  const seedDeadline = Date.now() + 180_000;
  for (;;) {
    const stored = await chunked<{ wamid: string }>(
      'select wamid from messages where wamid = any($1::text[])',
      seeded,
    ).catch(() => []);
    const atHooks = receivers.every((h) => seeded.every((w) => h.messages.has(w)));
    if (stored.length === seeded.length && atHooks) break;
    if (Date.now() > seedDeadline) {
      throw new Error(
        `first messages not through within 180 s: ${stored.length}/${seeded.length} stored, webhooks ${receivers.map((h) => seeded.filter((w) => h.messages.has(w)).length).join('/')}`,
      );
    }
    await sleep(500);
  }
  say('first messages stored and at every webhook; load and chaos start');

  const durationMs = DURATION_S * 1000;
  const loadStart = Date.now();
  let chaosRunning = true;
  const inboundLoad = paced(
    MESSAGES,
    durationMs,
    64,
    (i) => customerSays(customerIds[(i * 7919) % customerIds.length] as string, `chaos message ${i}`, 'load'),
    () => chaosRunning,
  );
  const sendLoad = paced(
    SENDS,
    durationMs,
    256,
    (i) => sendOne(i),
    () => chaosRunning,
  );

  const plan: Array<{ name: string; roles: Role[] } | 'ctrl-c'> = [
    { name: 'chats', roles: ['chats'] },
    { name: 'fanout', roles: ['fanout'] },
    { name: 'gateway', roles: ['gateway'] },
    { name: 'nats-server', roles: ['nats'] },
    { name: 'postgres', roles: ['postgres'] },
    { name: 'chats+nats-server', roles: ['chats', 'nats'] },
    { name: 'fanout+postgres', roles: ['fanout', 'postgres'] },
    'ctrl-c',
  ];
  const gap = durationMs / (plan.length + 1);
  for (const [k, s] of plan.entries()) {
    await sleep(Math.max(loadStart + (k + 1) * gap - Date.now(), 5_000));
    if (s === 'ctrl-c') await ctrlCStep();
    else await killStep(s.name, s.roles);
  }
  chaosRunning = false;
  say('chaos steps done; waiting for the load to finish');
  const [inboundDone, sendsDone] = await Promise.all([inboundLoad, sendLoad]);
  say(
    `load done (${inboundDone.started} messages in ${inboundDone.ms} ms, ${sendsDone.started} sends in ${sendsDone.ms} ms); settling`,
  );

  const { counts: c, settled, waited_ms } = await settle();

  const lostDbToWebhook = Object.fromEntries(Object.entries(c.dbToWebhook).map(([k, v]) => [k, v.length]));
  const lostStatusesToWebhook = Object.fromEntries(
    Object.entries(c.statusesToWebhook).map(([k, v]) => [k, v.length]),
  );
  const lost = {
    inbound_to_db: c.inboundToDb.length,
    inbound_never_accepted_by_inbox: c.neverAccepted.length,
    db_to_webhook: lostDbToWebhook,
    sends_accepted_to_db: c.sendsToDb.length,
    sends_to_network: c.sendsToNetwork.length,
    statuses_to_db: c.statusesToDb.length,
    statuses_db_to_webhook: lostStatusesToWebhook,
  };
  const anyLost =
    lost.inbound_to_db +
      lost.inbound_never_accepted_by_inbox +
      lost.sends_accepted_to_db +
      lost.sends_to_network +
      lost.statuses_to_db +
      Object.values(lostDbToWebhook).reduce((a, b) => a + b, 0) +
      Object.values(lostStatusesToWebhook).reduce((a, b) => a + b, 0) >
    0;
  const recovered = steps.filter((s) => s.recovery_ms !== undefined);
  const longest = recovered.reduce<StepResult | undefined>(
    (a, s) => (!a || (s.recovery_ms ?? 0) > (a.recovery_ms ?? 0) ? s : a),
    undefined,
  );
  const kinds = { seed: 0, load: 0, probe: 0 };
  for (const v of inbound.values()) kinds[v.kind]++;
  const rejected = sends.filter((s) => s.state === 'rejected');
  const gaveUp = sends.filter((s) => s.state === 'gave_up');
  const final = await shutdownProduct();

  const report = {
    run: {
      id: runId,
      messages: MESSAGES,
      sends: SENDS,
      customers: CUSTOMERS,
      duration_s: DURATION_S,
      load: {
        messages: inboundDone.started,
        messages_ms: inboundDone.ms,
        sends: sendsDone.started,
        sends_ms: sendsDone.ms,
      },
      settle_ms: waited_ms,
      settled,
      elapsed_s: Math.round((Date.now() - t0) / 1000),
      dir: runDir,
      logs,
    },
    steps: steps.map((s) => ({ ...s, at_s: s.at_s })),
    recovery_ms: Object.fromEntries(steps.map((s) => [s.step, s.recovery_ms ?? null])),
    longest_recovery: longest ? { step: longest.step, recovery_ms: longest.recovery_ms } : null,
    inbound: {
      posted: c.inboundWamids.length,
      by_kind: kinds,
      post_retries: inboundPostFailures,
      delivered_by_network: c.delivered.length,
      network_webhook_posts: [...deliveries.values()].reduce((a, d) => a + d.attempts.length, 0),
      in_db: c.inDb.size,
      webhooks: Object.fromEntries(
        receivers.map((h) => [
          h.name,
          {
            messages: [...c.inDb].filter((w) => h.messages.has(w)).length,
            requests: h.requests,
            distinct_webhook_ids: h.byWebhookId.size,
            repeated_webhook_ids: [...h.byWebhookId.values()].filter((n) => n > 1).length,
            messages_received_more_than_once: [...h.messages.values()].filter((n) => n > 1).length,
            bad_signatures: h.badSignatures,
            unparsable: h.unparsable,
          },
        ]),
      ),
    },
    statuses: {
      delivered_by_network: c.netPairs.size,
      in_db: [...c.netPairs].filter((p) => c.dbPairs.has(p)).length,
      webhooks: Object.fromEntries(
        receivers.map((h) => [h.name, [...c.netPairs].filter((p) => h.statuses.has(p)).length]),
      ),
    },
    sends: {
      attempted: sends.length,
      accepted_202: c.accepted.length,
      rejected: rejected.length,
      gave_up: gaveUp.length,
      requests: sends.reduce((a, s) => a + s.requests, 0),
      retries_by_reason: Object.fromEntries(sendRetriesBy),
      idempotency_conflicts: sends.filter((s) => s.ids.size > 1).length,
      in_db: c.accepted.length - c.sendsToDb.length,
      db_send_state: c.dbState,
      at_network: c.accepted.length - c.sendsToNetwork.length,
      db_wamid_not_at_network: c.wamidMismatch,
    },
    duplicates_at_network: c.duplicates.reduce((a, [, ids]) => a + ids.length - 1, 0),
    lost,
    samples: {
      inbound_to_db: sample(c.inboundToDb),
      inbound_never_accepted_by_inbox: sample(c.neverAccepted),
      db_to_webhook: Object.fromEntries(Object.entries(c.dbToWebhook).map(([k, v]) => [k, sample(v)])),
      sends_accepted_to_db: sample(c.sendsToDb.map((s) => `${s.key} ${s.messageId}`)),
      sends_to_network: sample(
        c.sendsToNetwork.map((s) => {
          const row = c.sendRows.find((r) => r.id === s.messageId);
          return `${s.key} ${s.messageId} ${row?.send_state ?? 'no row'}`;
        }),
      ),
      // Each copy with when the network took it (seconds into the run) and the last step before.
      duplicates_at_network: sample(
        c.duplicates.map(([k, ids]) => {
          const at = ids.map((id) => (acceptedAt.get(id) ?? 0) - Math.floor(t0 / 1000));
          const before = steps.filter((st) => st.at_s <= Math.max(...at) + 1).at(-1);
          const copies = ids.map((id, i) => `${id} at ${at[i]}s`).join(', ');
          return `${k}: ${copies}${before ? `; last step before: ${before.step} at ${before.at_s}s` : ''}`;
        }),
      ),
      statuses_to_db: sample(c.statusesToDb),
      statuses_db_to_webhook: Object.fromEntries(
        Object.entries(c.statusesToWebhook).map(([k, v]) => [k, sample(v)]),
      ),
      sends_rejected: sample(rejected.map((s) => `${s.key}: ${s.lastError}`)),
      sends_gave_up: sample(gaveUp.map((s) => `${s.key}: ${s.lastError}`)),
    },
    unexpected_exits: unexpectedExits(),
    final_stop: final,
    ok: !anyLost && steps.every((s) => s.recovered),
  };
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  finalExit = report.ok ? 0 : 1;
} catch (err) {
  say(`chaos run failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  if (product) say(`last lines of ${product.log}:\n${logTail(product)}`);
  await shutdownProduct().catch(() => undefined);
  finalExit = 2;
} finally {
  await dbClient?.end().catch(() => undefined);
  await sandbox.close();
  for (const r of receivers) await r.close();
  // The logs stay (they are the evidence); the home (database, NATS store) only when asked or
  // when something went wrong.
  if (finalExit === 0 && !opts.keep) {
    await rm(home, { recursive: true, force: true });
    say(`npm start logs kept in ${runDir}`);
  } else say(`kept ${runDir} (home, npm start logs)`);
}
process.exit(finalExit);
