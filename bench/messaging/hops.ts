/**
 * Where the time of one request goes: sequential sends and ingests with the gateway and chats
 * exporting their traces to a loopback OTLP receiver, then, per span name, the median start
 * (from the request's first span) and duration over the runs, in trace order, and the same over
 * the slowest 5 % of the runs (where the tail goes; a few hundred runs make that meaningful).
 *
 *   node bench/messaging/hops.ts [--runs 50]
 */
import { parseArgs } from 'node:util';
import { type ReceivedSpan, startOtlpReceiver, waitFor } from '@switchboard/testkit/tools';
import { Pool } from 'undici';
import { wholeNumber } from '../options.ts';
import { percentile, round } from '../stats.ts';
import {
  CUSTOMERS,
  customerWebhook,
  greetCustomers,
  postJson,
  replyBody,
  signedBy,
  startMessagingStack,
  watchCommitted,
} from './workload.ts';

const RUNS = wholeNumber(
  parseArgs({ options: { runs: { type: 'string', default: '50' } } }).values.runs,
  'runs',
  1,
);
const WARM_UP = 20;

const otlp = await startOtlpReceiver();
// Every send brings exactly three statuses back (none skipped or repeated), so the statuses
// still to come can be counted.
const stack = await startMessagingStack('bench_hops', {
  spansTo: otlp.endpoint,
  network: { readWithoutDeliveredRate: 0, duplicateStatusRate: 0 },
});
const { inbox, seed, sandbox, infra } = stack;
const client = new Pool(inbox.url, { connections: 1 });
const watch = await watchCommitted(infra.natsUrl, inbox.instance, { name: 'bench-hops' });

/** The path a gateway's request span names. */
const targetOf = (span: ReceivedSpan) => span.attributes['http.target'] ?? span.attributes['url.path'];
/** Chats' folds of network webhooks so far that stored customer messages, or statuses. */
const folds = (stored: 'switchboard.messages_stored' | 'switchboard.statuses_stored') =>
  otlp.spans.filter(
    (s) =>
      s.service === 'switchboard-chats' &&
      s.name.endsWith('.waba.inbound') &&
      Number(s.attributes[stored]) > 0,
  ).length;
/** Spans leave the services in batches every 200 ms: waits until `check` sees what it needs. */
const exported = (check: () => boolean, what: string) => waitFor(async () => check(), 60_000, what);
const roots = (path: string) =>
  otlp.spans.filter((s) => s.parentSpanId === undefined && targetOf(s) === path).length;

const token = await inbox.login();
const sign = signedBy(seed.webhookSecret);
const now = Math.floor(Date.now() / 1000);
async function sendOnce(i: number): Promise<void> {
  const status = await postJson(client, '/api/v1/messages/', replyBody(i), {
    authorization: `Token ${token}`,
  });
  if (status !== 202) throw new Error(`send: HTTP ${status}`);
}
async function ingestOnce(i: number): Promise<void> {
  const body = customerWebhook(seed, `wamid.hops.${i}`, i, now);
  const status = await postJson(client, '/api/v1/waba/webhook/', body, sign(body));
  if (status !== 200) throw new Error(`ingest: HTTP ${status}`);
}

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
 * The requests to `path` (those `keep` accepts): per span, its median start and duration over
 * all of them, and the same over the slowest 5 % (by the gateway's request span).
 */
function breakdown(path: string, keep: (spans: readonly ReceivedSpan[]) => boolean = () => true) {
  const byTrace = new Map<string, ReceivedSpan[]>();
  for (const s of otlp.spans) {
    const list = byTrace.get(s.traceId) ?? [];
    list.push(s);
    byTrace.set(s.traceId, list);
  }
  const traces: { root: ReceivedSpan; spans: ReceivedSpan[]; ms: number }[] = [];
  for (const spans of byTrace.values()) {
    const root = spans.find((s) => s.parentSpanId === undefined);
    if (root?.service !== 'switchboard-gateway' || targetOf(root) !== path || !keep(spans)) continue;
    if (root.startMs === undefined || root.endMs === undefined) continue;
    traces.push({ root, spans, ms: root.endMs - root.startMs });
  }
  const ms = traces.map((t) => t.ms);
  const slowest = [...traces]
    .sort((a, b) => b.ms - a.ms)
    .slice(0, Math.max(1, Math.ceil(traces.length / 20)));
  return {
    traces: traces.length,
    request_ms: {
      p50: round(percentile(ms, 50), 2),
      p95: round(percentile(ms, 95), 2),
      p99: round(percentile(ms, 99), 2),
    },
    spans: spanMedians(traces),
    slowest_5_percent: { traces: slowest.length, spans: spanMedians(slowest) },
  };
}

try {
  // As in bench:messaging, the customers wrote first (so the network accepts the replies), and
  // requests go to and come from them in turn: chats handles each customer's bodies and sends
  // one at a time, so one customer alone would time that queue.
  await watch.allCommitted(await greetCustomers(sandbox), 'every customer message committed');
  for (let i = 0; i < WARM_UP; i++) await sendOnce(i);
  for (let i = 0; i < WARM_UP; i++) await ingestOnce(CUSTOMERS + i);
  await exported(() => folds('switchboard.statuses_stored') >= 3 * WARM_UP, 'the warm-up statuses folded');
  // The receiver keeps every span: the measured requests' only from here.
  otlp.spans.length = 0;

  for (let i = 0; i < RUNS; i++) await sendOnce(WARM_UP + i);
  // The sandbox posts each send's statuses 50, 100 and 150 ms after it: the ingests start once
  // chats has folded all of them, so they do not time that backlog.
  await exported(
    () => folds('switchboard.statuses_stored') >= 3 * RUNS && roots('/api/v1/messages/') >= RUNS,
    'the sends and their statuses',
  );
  const send = breakdown('/api/v1/messages/');
  otlp.spans.length = 0;

  for (let i = 0; i < RUNS; i++) await ingestOnce(CUSTOMERS + WARM_UP + i);
  await exported(() => folds('switchboard.messages_stored') >= RUNS, 'the ingests folded');
  const ingest = breakdown('/api/v1/waba/webhook/', (spans) =>
    spans.some((s) => Number(s.attributes['switchboard.messages_stored']) > 0),
  );

  const result = { benchmark: 'messaging-hops', runs: RUNS, customers: CUSTOMERS, send, ingest };
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
} finally {
  await client.close();
  await watch.close();
  await stack.stop();
  await otlp.close();
}
