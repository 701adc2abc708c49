/**
 * What the messaging benches send and how they read what it cost: the customers, their signed
 * network webhooks, and the CPU time of each process of the inbox.
 */
import { createHmac } from 'node:crypto';
import { connectNats } from '@switchboard/kit';
import { instanceId, messagesWebhookBody, networkEvent } from '@switchboard/proto';
import {
  type NumberBehaviour,
  type SandboxCredentials,
  type SandboxHandle,
  sandboxSettings,
  startSandbox,
} from '@switchboard/sandbox';
import { type LocalInfra, startLocalInfra } from '@switchboard/testkit/infra';
import { waitFor } from '@switchboard/testkit/tools';
import type { Pool } from 'undici';
import { z } from 'zod';
import { type BenchInbox, INBOX_SHAPES, type InboxShape, startBenchInbox } from '../inbox-processes.ts';
import { startOtlpSink } from '../otlp-sink.ts';
import { cpuMsOfTrees, ownCpuMs } from '../process-cpu.ts';

/** The benches' customers: request `i` is from or to customer `i % CUSTOMERS`. */
export const CUSTOMERS = 200;

export const customer = (i: number) => `4917${String(i % CUSTOMERS).padStart(8, '0')}`;

/** A network webhook with one text message of customer `i`, named in `contacts` as the network does. */
export function customerWebhook(seed: SandboxCredentials, wamid: string, i: number, ts: number): string {
  const waId = customer(i);
  return JSON.stringify(
    messagesWebhookBody(
      { wabaId: 'bench', displayPhoneNumber: seed.displayPhoneNumber, phoneNumberId: seed.phoneNumberId },
      {
        contacts: [{ profile: { name: `Customer ${i % CUSTOMERS}` }, wa_id: waId }],
        messages: [
          { from: waId, id: wamid, timestamp: String(ts), type: 'text', text: { body: `message ${i}` } },
        ],
      },
    ),
  );
}

/** The body of `POST /api/v1/messages/`: a text reply to customer `i`. */
export const replyBody = (i: number) =>
  JSON.stringify({ wa_id: customer(i), type: 'text', text: { body: `reply ${i}` } });

/** POSTs a JSON body through `client`, reads the answer away, and returns its status. */
export async function postJson(
  client: Pool,
  path: string,
  body: string,
  headers: Record<string, string>,
): Promise<number> {
  const res = await client.request({
    method: 'POST',
    path,
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
  await res.body.dump();
  return res.statusCode;
}

/** The headers of a webhook body signed as the network signs it. */
export const signedBy = (secret: string) => (body: string) => ({
  'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
});

/**
 * CPU time used so far (ms) by the inbox's processes (the gateway and chats, or the one inbox
 * process), nats-server, PostgreSQL with its backends, and this process (the bench's client and
 * the sandbox).
 */
const inboxCpuReader = (inbox: BenchInbox, infra: LocalInfra) => () => ({
  ...cpuMsOfTrees({
    ...Object.fromEntries(Object.entries(inbox.processes).map(([name, p]) => [name, p.child.pid])),
    nats: infra.nats?.pid,
    postgres: infra.postgres?.pid,
  }),
  bench_and_sandbox: ownCpuMs(),
});

/** The environment that makes a service write a V8 CPU profile `<name>.cpuprofile` into `dir` at exit. */
const profiled = (dir: string | undefined, name: string): Record<string, string> =>
  dir ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${dir} --cpu-prof-name=${name}.cpuprofile` } : {};

/** The command-line options of the stack (`startMessagingStack`) that every messaging bench takes. */
export const STACK_ARGS = {
  // Writes V8 CPU profiles of the inbox's processes into this directory (bench/profile-summary.ts).
  profile: { type: 'string' },
  // The inbox as separate gateway and chats processes, or all of it in one process.
  shape: { type: 'string', default: 'processes' },
  // The inbox exports its traces (OTLP/HTTP to a loopback endpoint in this process).
  traces: { type: 'boolean', default: false },
} as const;

/** `startMessagingStack`'s options from the parsed `STACK_ARGS`. */
export function stackOptionsOf(values: { profile?: string; shape?: string; traces?: boolean }) {
  return {
    profile: values.profile,
    shape: z.enum(INBOX_SHAPES).parse(values.shape),
    traces: values.traces ?? false,
  };
}

/**
 * The sandbox posts a send's `sent`, `delivered` and `read` 50, 100 and 150 ms after it, as the
 * network does: each delay counts from the status before (`planStatuses`).
 */
const STATUS_DELAYS_MS = { sent: 50, delivered: 50, read: 50 } as const;

/**
 * NATS and PostgreSQL (`NATS_URL` / `DATABASE_URL` when set, else their own), the sandbox
 * network posting `sent`, `delivered` and `read` 50, 100 and 150 ms after each send, as the
 * network does, and the inbox in the given shape: the gateway and chats as their own processes
 * (the default), or the whole inbox in one (`profile`: a directory its processes write their
 * CPU profiles into, read with bench/profile-summary.ts; `traces`: the inbox exports its traces,
 * with the SDK's default batching, to a loopback OTLP endpoint that accepts them).
 */
export async function startMessagingStack(
  database: string,
  opts: {
    profile?: string | undefined;
    shape?: InboxShape;
    traces?: boolean;
    /** Where the inbox exports its spans instead (OTLP/HTTP JSON, batches every 200 ms), to keep them. */
    spansTo?: string;
    /** The sandbox's behaviour beyond the status delays (e.g. every status, none skipped). */
    network?: Partial<NumberBehaviour>;
  } = {},
) {
  const shape = opts.shape ?? 'processes';
  const infra = await startLocalInfra();
  const databaseUrl = await infra.createDatabase(database);
  const sandbox = await startSandbox({
    settings: sandboxSettings({ behaviour: { statusDelaysMs: STATUS_DELAYS_MS, ...opts.network } }),
  });
  const seed = sandbox.seed;
  if (!seed) throw new Error('no sandbox seed');
  const sink = opts.traces ? await startOtlpSink() : undefined;
  const inbox = await startBenchInbox({
    natsUrl: infra.natsUrl,
    databaseUrl,
    sandbox,
    env: {
      gateway: profiled(opts.profile, shape === 'one-process' ? 'inbox' : 'gateway'),
      chats: profiled(opts.profile, 'chats'),
      both: opts.spansTo
        ? {
            OTEL_EXPORTER_OTLP_ENDPOINT: opts.spansTo,
            OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
            OTEL_BSP_SCHEDULE_DELAY: '200',
          }
        : sink
          ? { OTEL_EXPORTER_OTLP_ENDPOINT: sink.endpoint }
          : {},
    },
    shape,
  });
  let stopping: Promise<void> | undefined;
  /** Stops everything, once: at the bench's end, or when it fails (below). */
  const stop = () =>
    (stopping ??= (async () => {
      process.off('uncaughtException', failed);
      await inbox.stop();
      // After the inbox: its last spans are exported as it shuts down.
      await sink?.close();
      await sandbox.close();
      await infra.stop();
    })());
  // A bench that fails (its top-level code throws) stops the inbox's processes before it exits:
  // they are its children, and would run on, reconnecting, without it.
  const failed = (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    void stop()
      .catch(() => undefined)
      .finally(() => process.exit(1));
  };
  process.once('uncaughtException', failed);
  return {
    infra,
    sandbox,
    seed,
    inbox,
    cpuNow: inboxCpuReader(inbox, infra),
    /** Trace exports the inbox made so far (with `traces`; its last batches come when it stops). */
    traceExports: () => sink?.counts(),
    stop,
  };
}

/**
 * When each network wamid was first seen committed: chats publishes every body's event on
 * `events.network` once its statement has committed, and this listens to that subject.
 * `onFirst` is told of each wamid once. `from` is the inbox's instance (its events are validated
 * as the contract says), or another subject whose events carry the body (the ingest floor's).
 */
export async function watchCommitted(
  natsUrl: string,
  from: string | { subject: string },
  opts: { name: string; onFirst?: (wamid: string) => void },
) {
  const nc = await connectNats(natsUrl, opts.name);
  const committedAt = new Map<string, number>();
  /** Events of bodies with statuses (the network's status webhooks), redeliveries included. */
  let statusEvents = 0;
  const waiting = new Map<string, () => void>();
  const decoder = new TextDecoder();
  const [subject, schema] =
    typeof from === 'string'
      ? [networkEvent.subject(instanceId(from)), networkEvent.schema]
      : [from.subject, z.object({ body: z.string() })];
  void (async () => {
    for await (const m of nc.subscribe(subject)) {
      const t = performance.now();
      const event = schema.parse(JSON.parse(decoder.decode(m.data)));
      // The inbox's events name their kinds; the ingest floor's carry the body only.
      if ('kinds' in event && Array.isArray(event.kinds) && event.kinds.includes('status')) statusEvents++;
      for (const [, wamid] of event.body.matchAll(/"id":\s*"(wamid\.[^"]+)"/g)) {
        if (!wamid || committedAt.has(wamid)) continue;
        committedAt.set(wamid, t);
        opts.onFirst?.(wamid);
        waiting.get(wamid)?.();
      }
    }
  })();
  return {
    committedAt,
    /** Resolves once `wamid` is committed. */
    committed: (wamid: string) =>
      new Promise<void>((resolve) => {
        if (committedAt.has(wamid)) resolve();
        else waiting.set(wamid, resolve);
      }),
    allCommitted: (wamids: readonly string[], what: string) =>
      waitFor(async () => wamids.every((w) => committedAt.has(w)), 300_000, what),
    statusEvents: () => statusEvents,
    close: () => nc.close(),
  };
}

/** Every customer writes to the inbox through the network (so it accepts replies); their wamids. */
export async function greetCustomers(sandbox: SandboxHandle): Promise<string[]> {
  return Promise.all(
    Array.from({ length: CUSTOMERS }, async (_, i) => {
      const res = await fetch(`${sandbox.url}/sandbox/customers/${customer(i)}/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ type: 'text', text: { body: 'hello' } }),
      });
      if (!res.ok) throw new Error(`customer ${customer(i)}: HTTP ${res.status} ${await res.text()}`);
      return z.object({ id: z.string() }).parse(await res.json()).id;
    }),
  );
}
