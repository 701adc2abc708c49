/**
 * Chat import benchmark on a generated 100,000-line export:
 *
 *  parse:  `@switchboard/chat-export` alone (median of several runs after a warm-up), beside a
 *          raw baseline measured in the same run: the same text split into lines and each line
 *          tested against one fixed-format header regex (what a parser of one known format costs
 *          at least);
 *  import: the whole `POST /api/v1/chat_import/` on real infrastructure (nats-server, embedded
 *          PostgreSQL, the sandbox, gateway and chats as their own processes), from the request
 *          to the answer with every message stored; then the same request again (nothing new),
 *          beside a raw baseline: a bare Fastify server taking the same body.
 *
 * The target for the whole import is 3 s.
 *
 *   node bench/chat-import/run.ts [--lines 100000] [--runs 5] [--parse-only]
 *
 * `SERVICE_NODE_OPTIONS="--cpu-prof --cpu-prof-dir=/tmp/prof"` profiles the gateway and chats.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { parseChatExport } from '@switchboard/chat-export';
import { sandboxSettings, startSandbox } from '@switchboard/sandbox';
import { startLocalInfra } from '@switchboard/testkit/infra';
import { repoRoot } from '@switchboard/testkit/tools';
import Fastify from 'fastify';
import pg from 'pg';
import { startBenchInbox } from '../inbox-processes.ts';
import { cpuMsOf } from '../process-cpu.ts';
import { percentile, round } from '../stats.ts';
import { generateExport } from './export.ts';

const args = parseArgs({
  options: {
    lines: { type: 'string', default: '100000' },
    runs: { type: 'string', default: '5' },
    'parse-only': { type: 'boolean', default: false },
  },
}).values;
const LINES = Number(args.lines);
const RUNS = Number(args.runs);

const text = generateExport(LINES);

function timed<T>(fn: () => T): { ms: number; value: T } {
  const start = performance.now();
  const value = fn();
  return { ms: performance.now() - start, value };
}

const RAW_HEADER = /^(\d{2})\/(\d{2})\/(\d{4}), (\d{2}):(\d{2}) - ([^:]+): /;
function raw(): number {
  let headers = 0;
  for (const line of text.split('\n')) if (RAW_HEADER.test(line)) headers++;
  return headers;
}

const parse = () => parseChatExport(text, { deviceLanguage: 'en-GB' });
parse();
raw();
const parseMs: number[] = [];
const rawMs: number[] = [];
let messages = 0;
for (let r = 0; r < RUNS; r++) {
  const p = timed(parse);
  if (!p.value.ok) throw new Error(`generated export did not parse: ${p.value.error}`);
  messages = p.value.messages.length;
  parseMs.push(p.ms);
  rawMs.push(timed(raw).ms);
}

const parseP50 = percentile(parseMs, 50);
const rawP50 = percentile(rawMs, 50);
const result: Record<string, unknown> = {
  lines: LINES,
  bytes: Buffer.byteLength(text),
  messages,
  parse: { runs: RUNS, p50_ms: round(parseP50), max_ms: round(Math.max(...parseMs)) },
  raw_baseline: { p50_ms: round(rawP50) },
  parse_over_raw: round(parseP50 / rawP50, 2),
  target_whole_import_ms: 3000,
};
if (!args['parse-only']) result.import = await measureImport();
await mkdir(join(repoRoot, 'bench/results'), { recursive: true });
await writeFile(join(repoRoot, 'bench/results/chat-import.json'), `${JSON.stringify(result, null, 2)}\n`);
console.log(JSON.stringify(result, null, 2));

/** CPU used during `run` by the gateway, chats and chats' database connections: where the time goes. */
async function cpuDuring<T>(
  processes: { gateway: number | undefined; chats: number | undefined },
  databaseUrl: string,
  run: () => Promise<T>,
): Promise<{ value: T; cpu_ms: Record<string, number | null> }> {
  const admin = new pg.Client({ connectionString: databaseUrl });
  await admin.connect();
  const backends = async () =>
    (
      await admin.query<{ pid: number }>(
        'select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
      )
    ).rows.map((r) => r.pid);
  const sample = (pids: number[]) => new Map(pids.map((p) => [p, cpuMsOf(p)] as const));
  const before = sample(
    [processes.gateway, processes.chats, ...(await backends())].filter((p) => p !== undefined),
  );
  const value = await run();
  const after = sample(
    [processes.gateway, processes.chats, ...(await backends())].filter((p) => p !== undefined),
  );
  await admin.end();
  const used = (pid: number | undefined) => {
    if (pid === undefined) return null;
    const end = after.get(pid);
    return end === undefined || end === null ? null : end - (before.get(pid) ?? 0);
  };
  let database = 0;
  for (const pid of after.keys())
    if (pid !== processes.gateway && pid !== processes.chats) database += used(pid) ?? 0;
  return { value, cpu_ms: { gateway: used(processes.gateway), chats: used(processes.chats), database } };
}

async function measureImport(): Promise<Record<string, unknown>> {
  const infra = await startLocalInfra();
  const databaseUrl = await infra.createDatabase('bench_chat_import');
  const sandbox = await startSandbox({ settings: sandboxSettings({}) });
  const inbox = await startBenchInbox({
    natsUrl: infra.natsUrl,
    databaseUrl,
    sandbox,
    ...(process.env.SERVICE_NODE_OPTIONS && {
      env: { both: { NODE_OPTIONS: process.env.SERVICE_NODE_OPTIONS } },
    }),
  });
  const { url } = inbox;
  const { gateway, chats } = inbox.processes;
  if (!gateway || !chats)
    throw new Error('the chat-import bench needs the gateway and chats as their own processes');
  try {
    const token = await inbox.login();
    const body = JSON.stringify({
      chat_text: text,
      utc_offset_minutes: 60,
      device_language_code: 'en-GB',
      media_files: [],
    });
    const post = async (target: string, headers: Record<string, string> = {}) => {
      const start = performance.now();
      const res = await fetch(target, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body,
      });
      const answer = (await res.json()) as { new_messages?: number };
      if (res.status !== 200) throw new Error(`import answered ${res.status}: ${JSON.stringify(answer)}`);
      return { ms: performance.now() - start, newMessages: answer.new_messages ?? 0 };
    };
    const auth = { authorization: `Token ${token}` };
    const first = await cpuDuring({ gateway: gateway.child.pid, chats: chats.child.pid }, databaseUrl, () =>
      post(`${url}/api/v1/chat_import/`, auth),
    );
    const again = await post(`${url}/api/v1/chat_import/`, auth);

    const raw = Fastify({ logger: false, bodyLimit: 100 * 1024 * 1024 });
    raw.post('/api/v1/chat_import/', async () => ({ new_messages: 0 }));
    await raw.listen({ host: '127.0.0.1', port: 0 });
    const address = raw.server.address();
    if (!address || typeof address === 'string') throw new Error('no raw port');
    const rawPost = await post(`http://127.0.0.1:${address.port}/api/v1/chat_import/`);
    await raw.close();
    return {
      first: { ms: round(first.value.ms), new_messages: first.value.newMessages, cpu_ms: first.cpu_ms },
      again: { ms: round(again.ms), new_messages: again.newMessages },
      raw_baseline_ms: round(rawPost.ms),
      within_target: first.value.ms <= 3000,
      load_average: loadavg().map((l) => round(l, 2)),
    };
  } finally {
    await inbox.stop();
    await sandbox.close();
    await infra.stop();
  }
}
