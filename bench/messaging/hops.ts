/**
 * Where the time of one request goes: sequential sends and ingests with the gateway and chats
 * exporting their traces to a loopback OTLP receiver, then, per span name, the median start
 * (from the request's first span) and duration over the runs, in trace order, and the same over
 * the slowest 5 % of the runs (where the tail goes).
 *
 *   node bench/messaging/hops.ts [--runs 50]
 */
import { createHmac } from 'node:crypto';
import { parseArgs } from 'node:util';
import { messagesWebhookBody } from '@switchboard/proto';
import { sandboxSettings, startSandbox } from '@switchboard/sandbox';
import { startLocalInfra } from '@switchboard/testkit/infra';
import { type ReceivedSpan, startOtlpReceiver, waitFor } from '@switchboard/testkit/tools';
import { startBenchInbox } from '../inbox-processes.ts';
import { percentile, round } from '../stats.ts';

const RUNS = Number(parseArgs({ options: { runs: { type: 'string', default: '50' } } }).values.runs);

const infra = await startLocalInfra();
const databaseUrl = await infra.createDatabase('bench_hops');
const sandbox = await startSandbox({ settings: sandboxSettings({}) });
const seed = sandbox.seed;
if (!seed) throw new Error('no sandbox seed');
const otlp = await startOtlpReceiver();
const inbox = await startBenchInbox({
  natsUrl: infra.natsUrl,
  databaseUrl,
  sandbox,
  env: {
    both: {
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '200',
    },
  },
});
const { url } = inbox;

// As in bench:messaging, requests go to and come from many customers in turn: chats handles
// each customer's bodies and sends one at a time, so one customer alone would time that queue.
const CUSTOMERS = 50;
const customer = (i: number) =>
  `4917000${String(((i % CUSTOMERS) + CUSTOMERS) % CUSTOMERS).padStart(5, '0')}`;
for (let c = 0; c < CUSTOMERS; c++) {
  const greeting = await fetch(`${sandbox.url}/sandbox/customers/${customer(c)}/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ type: 'text', text: { body: 'hello' } }),
  });
  if (!greeting.ok) throw new Error(`customer message: ${greeting.status}`);
}
const token = await inbox.login();

async function sendOnce(i: number): Promise<number> {
  const res = await fetch(`${url}/api/v1/messages/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Token ${token}` },
    body: JSON.stringify({ wa_id: customer(i), type: 'text', text: { body: `reply ${i}` } }),
  });
  await res.arrayBuffer();
  if (res.status !== 202) throw new Error(`send: ${res.status}`);
  return res.status;
}
async function ingestOnce(i: number): Promise<void> {
  const body = JSON.stringify(
    messagesWebhookBody(
      {
        wabaId: 'hops',
        displayPhoneNumber: seed?.displayPhoneNumber ?? '',
        phoneNumberId: seed?.phoneNumberId ?? '',
      },
      {
        contacts: [{ profile: { name: 'Hops' }, wa_id: customer(i) }],
        messages: [
          {
            from: customer(i),
            id: `wamid.hops.${i}`,
            timestamp: String(Math.floor(Date.now() / 1000)),
            type: 'text',
            text: { body: `hop ${i}` },
          },
        ],
      },
    ),
  );
  const res = await fetch(`${url}/api/v1/waba/webhook/`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-hub-signature-256': `sha256=${createHmac('sha256', seed?.webhookSecret ?? '')
        .update(body)
        .digest('hex')}`,
    },
    body,
  });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`ingest: ${res.status}`);
}

/** The path a gateway's request span names. */
const targetOf = (span: ReceivedSpan) => span.attributes['http.target'] ?? span.attributes['url.path'];

/** Per span name over the given traces: median offset from the trace's first span and median duration. */
function spanMedians(traces: readonly { root: ReceivedSpan; spans: ReceivedSpan[] }[]) {
  const rows = new Map<string, { offsets: number[]; durations: number[] }>();
  for (const { root, spans } of traces) {
    for (const s of spans) {
      if (s.startMs === undefined || s.endMs === undefined || root.startMs === undefined) continue;
      const key = `${s.service} ${s.name}`;
      const row = rows.get(key) ?? { offsets: [], durations: [] };
      row.offsets.push(s.startMs - root.startMs);
      row.durations.push(s.endMs - s.startMs);
      rows.set(key, row);
    }
  }
  return [...rows]
    .map(([span, r]) => ({
      span,
      count: r.durations.length,
      start_ms: round(percentile(r.offsets, 50), 2),
      duration_ms: round(percentile(r.durations, 50), 2),
    }))
    .sort((a, b) => a.start_ms - b.start_ms);
}

/**
 * The requests to `path`: per span, its median start and duration over all of them, and the
 * same over the slowest 5 % (by the gateway's request span), which says where a p99 goes.
 */
function breakdown(path: string) {
  const byTrace = new Map<string, ReceivedSpan[]>();
  for (const s of otlp.spans) {
    const list = byTrace.get(s.traceId) ?? [];
    list.push(s);
    byTrace.set(s.traceId, list);
  }
  const traces: { root: ReceivedSpan; spans: ReceivedSpan[]; ms: number }[] = [];
  for (const spans of byTrace.values()) {
    const root = spans.find((s) => s.parentSpanId === undefined);
    if (root?.service !== 'switchboard-gateway' || targetOf(root) !== path) continue;
    if (root.startMs === undefined || root.endMs === undefined) continue;
    traces.push({ root, spans, ms: root.endMs - root.startMs });
  }
  const ms = traces.map((t) => t.ms);
  const p95 = percentile(ms, 95);
  const slowest = traces.filter((t) => t.ms >= p95);
  return {
    traces: traces.length,
    request_ms: { p50: round(percentile(ms, 50), 2), p95: round(p95, 2), p99: round(percentile(ms, 99), 2) },
    spans: spanMedians(traces),
    slowest_5_percent: { traces: slowest.length, spans: spanMedians(slowest) },
  };
}

// Warm up, then measure: the receiver keeps every span, so clear it first.
for (let i = 0; i < 20; i++) await sendOnce(-i - 1);
for (let i = 0; i < 20; i++) await ingestOnce(-i - 1);
await new Promise((r) => setTimeout(r, 1_000));
otlp.spans.length = 0;
const count = (service: string, name: (n: string) => boolean) =>
  otlp.spans.filter((s) => s.service === service && name(s.name)).length;
/** Spans leave the services in batches every 200 ms: waits for the requests' root spans. */
const exported = (path: string) =>
  waitFor(
    async () => otlp.spans.filter((s) => s.parentSpanId === undefined && targetOf(s) === path).length >= RUNS,
    30_000,
    'spans',
  );

for (let i = 0; i < RUNS; i++) await sendOnce(i);
// The sandbox posts each send's statuses up to 150 ms after it: the ingests start once chats
// has folded every body the gateway took, so they do not time that backlog.
// Both counts come in the services' export batches: settled when the gateway's has not moved
// for 500 ms and chats' has caught up with it.
let taken = -1;
let since = performance.now();
await waitFor(
  async () => {
    const now = count('switchboard-gateway', (n) => n.endsWith('.waba.inbound'));
    if (now !== taken) [taken, since] = [now, performance.now()];
    return (
      performance.now() - since >= 500 &&
      count('switchboard-chats', (n) => n.endsWith('.waba.inbound')) >= taken
    );
  },
  120_000,
  'the statuses of the sends folded',
);
await exported('/api/v1/messages/');
const send = breakdown('/api/v1/messages/');
otlp.spans.length = 0;

for (let i = 0; i < RUNS; i++) await ingestOnce(i);
await exported('/api/v1/waba/webhook/');
await new Promise((r) => setTimeout(r, 1_000));

const result = {
  benchmark: 'messaging-hops',
  runs: RUNS,
  customers: CUSTOMERS,
  send,
  ingest: breakdown('/api/v1/waba/webhook/'),
};
process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);

await inbox.stop();
await otlp.close();
await sandbox.close();
await infra.stop();
