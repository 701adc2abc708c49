/**
 * Where the time of one request goes: sequential sends and ingests with the gateway and chats
 * exporting their traces to a loopback OTLP receiver, then, per span name, the median start
 * (from the request's first span) and duration over the runs, in trace order.
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

const waId = '491700000042';
const greeting = await fetch(`${sandbox.url}/sandbox/customers/${waId}/messages`, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ type: 'text', text: { body: 'hello' } }),
});
if (!greeting.ok) throw new Error(`customer message: ${greeting.status}`);
const token = await inbox.login();

async function sendOnce(i: number): Promise<number> {
  const res = await fetch(`${url}/api/v1/messages/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Token ${token}` },
    body: JSON.stringify({ wa_id: waId, type: 'text', text: { body: `reply ${i}` } }),
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
        contacts: [{ profile: { name: 'Hops' }, wa_id: waId }],
        messages: [
          {
            from: waId,
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

/** Per span name: median offset from the trace's first span and median duration. */
function breakdown(path: string) {
  const byTrace = new Map<string, ReceivedSpan[]>();
  for (const s of otlp.spans) {
    const list = byTrace.get(s.traceId) ?? [];
    list.push(s);
    byTrace.set(s.traceId, list);
  }
  const rows = new Map<string, { offsets: number[]; durations: number[]; service: string }>();
  let traces = 0;
  for (const spans of byTrace.values()) {
    const root = spans.find((s) => s.parentSpanId === undefined);
    const target = root?.attributes['http.target'] ?? root?.attributes['url.path'];
    if (root?.service !== 'switchboard-gateway' || target !== path || root.startMs === undefined) continue;
    traces++;
    for (const s of spans) {
      if (s.startMs === undefined || s.endMs === undefined) continue;
      const key = `${s.service} ${s.name}`;
      const row = rows.get(key) ?? { offsets: [], durations: [], service: s.service };
      row.offsets.push(s.startMs - root.startMs);
      row.durations.push(s.endMs - s.startMs);
      rows.set(key, row);
    }
  }
  return {
    traces,
    spans: [...rows]
      .map(([span, r]) => ({
        span,
        count: r.durations.length,
        start_ms: round(percentile(r.offsets, 50), 2),
        duration_ms: round(percentile(r.durations, 50), 2),
      }))
      .sort((a, b) => a.start_ms - b.start_ms),
  };
}

// Warm up, then measure: the receiver keeps every span, so clear it first.
for (let i = 0; i < 20; i++) await sendOnce(-i - 1);
for (let i = 0; i < 20; i++) await ingestOnce(-i - 1);
await new Promise((r) => setTimeout(r, 1_000));
otlp.spans.length = 0;
for (let i = 0; i < RUNS; i++) await sendOnce(i);
for (let i = 0; i < RUNS; i++) await ingestOnce(i);
// Spans leave the services in batches every 200 ms.
await waitFor(
  async () => otlp.spans.filter((s) => s.name.startsWith('POST')).length >= RUNS * 2,
  30_000,
  'spans',
);
await new Promise((r) => setTimeout(r, 1_000));

const result = {
  benchmark: 'messaging-hops',
  runs: RUNS,
  send: breakdown('/api/v1/messages/'),
  ingest: breakdown('/api/v1/waba/webhook/'),
};
process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);

await inbox.stop();
await otlp.close();
await sandbox.close();
await infra.stop();
