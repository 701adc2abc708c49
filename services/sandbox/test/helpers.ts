import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { type Receiver, startReceiver } from '@switchboard/testkit';
import { afterAll, beforeAll } from 'vitest';
import { z } from 'zod';
import {
  createNetworkClient,
  type InboundMessage,
  type MessageStatus,
  type MessagesWebhookBody,
  MessagesWebhookBodySchema,
  type NetworkClient,
  type NetworkClientOptions,
  NetworkError,
} from '../src/domain/wire.ts';
import { type SandboxHandle, sandboxSettings, startSandbox } from '../src/index.ts';

export interface ReceivedWebhook {
  readonly raw: string;
  readonly body: MessagesWebhookBody;
  readonly signature: string | undefined;
  readonly headers: IncomingHttpHeaders;
}

export interface WebhookReceiver {
  readonly url: string;
  readonly received: ReceivedWebhook[];
  /** Bodies that broke the Cloud API schema; a test fails when this is not empty. */
  readonly invalid: Array<{ raw: string; error: string }>;
  /** Status answered to the n-th request (0-based); 200 by default. */
  respond: (n: number) => number;
  messages(): InboundMessage[];
  statuses(wamid: string): MessageStatus[];
  close(): Promise<void>;
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('not listening on TCP');
  return `http://127.0.0.1:${address.port}`;
}

function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

/** A real webhook receiver on loopback, as the inbox gateway would be (testkit's receiver). */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const invalid: Array<{ raw: string; error: string }> = [];
  let http: Receiver | undefined;
  const receiver: WebhookReceiver = {
    url: '',
    received,
    invalid,
    respond: () => 200,
    messages: () =>
      received.flatMap((r) => r.body.entry.flatMap((e) => e.changes.flatMap((c) => c.value.messages ?? []))),
    statuses: (wamid) =>
      received.flatMap((r) =>
        r.body.entry.flatMap((e) =>
          e.changes.flatMap((c) => (c.value.statuses ?? []).filter((s) => s.id === wamid)),
        ),
      ),
    close: async () => http?.close(),
  };
  http = await startReceiver({
    path: '/webhook',
    reply: (req, index) => {
      const status = receiver.respond(index);
      if (status === 200) {
        let json: unknown;
        try {
          json = JSON.parse(req.body);
        } catch {
          json = undefined;
        }
        const parsed = MessagesWebhookBodySchema.safeParse(json);
        if (parsed.success) {
          const sig = req.headers['x-hub-signature-256'];
          received.push({
            raw: req.body,
            body: parsed.data,
            signature: typeof sig === 'string' ? sig : undefined,
            headers: req.headers,
          });
        } else {
          invalid.push({ raw: req.body, error: parsed.error.message });
        }
      }
      return { status, headers: { 'content-type': 'application/json' }, body: '{}' };
    },
  });
  return Object.assign(receiver, { url: http.url });
}

/** Independent of the sandbox's own signing code: HMAC-SHA256 of the raw body, hex. */
export function expectedSignature(secret: string, raw: string): string {
  return `sha256=${createHmac('sha256', secret).update(raw, 'utf8').digest('hex')}`;
}

export interface FileServer {
  readonly url: string;
  close(): Promise<void>;
}

/** Hosts media the business links to; unknown paths answer 404. */
export async function startFileServer(
  files: Record<string, { type: string; data: Buffer }>,
): Promise<FileServer> {
  const server = createServer((req, res) => {
    const file = files[req.url ?? ''];
    if (!file) {
      res.writeHead(404).end('not found');
      return;
    }
    res
      .writeHead(200, { 'content-type': file.type, 'content-length': String(file.data.length) })
      .end(file.data);
  });
  const url = await listen(server);
  return { url, close: () => closeServer(server) };
}

/** A sandbox whose statuses and retries take milliseconds, with deterministic randomness. */
export async function startFastSandbox(): Promise<SandboxHandle> {
  return startSandbox({
    settings: sandboxSettings({
      behaviour: {
        statusDelaysMs: { sent: 5, delivered: 10, read: 10 },
        readWithoutDeliveredRate: 0,
        duplicateStatusRate: 0,
      },
      webhookRetryScheduleMs: [20, 40, 80, 160, 320],
      webhookTimeoutMs: 2_000,
      mediaLinkTimeoutMs: 2_000,
    }),
    random: () => 0.5,
  });
}

export function seedOf(sb: SandboxHandle) {
  if (!sb.seed) throw new Error('the sandbox has no seed number');
  return sb.seed;
}

export function clientFor(sb: SandboxHandle, extra: Partial<NetworkClientOptions> = {}): NetworkClient {
  return createNetworkClient({
    baseUrl: sb.url,
    apiKey: seedOf(sb).apiKey,
    retries: 3,
    minRetryDelayMs: 10,
    maxRetryDelayMs: 2_000,
    timeoutMs: 5_000,
    ...extra,
  });
}

export interface JsonResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly json: unknown;
}

/** A raw HTTP call, for control routes and for requests the typed client refuses to build. */
export async function call(
  sb: SandboxHandle,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<JsonResponse> {
  const res = await fetch(`${sb.url}${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, json: text ? JSON.parse(text) : undefined };
}

/** Points the seed number's webhook at the receiver, through the Cloud API route the inbox uses. */
/** A fast sandbox, a webhook receiver and a network client of the seed number. */
export interface SandboxRig {
  sb: SandboxHandle;
  receiver: WebhookReceiver;
  client: NetworkClient;
}

/**
 * The rig of a test file, started before its tests (the seed number's webhook pointing at the
 * receiver unless `connect` is false) and closed after them: read its members inside the tests.
 */
export function sandboxRig(
  opts: { connect?: boolean; client?: Partial<NetworkClientOptions> } = {},
): SandboxRig {
  // Filled before the first test runs.
  const rig = {} as SandboxRig;
  beforeAll(async () => {
    rig.sb = await startFastSandbox();
    rig.receiver = await startWebhookReceiver();
    rig.client = clientFor(rig.sb, opts.client);
    if (opts.connect ?? true) await connectWebhook(rig.client, rig.receiver);
  });
  afterAll(async () => {
    await rig.client?.close();
    await rig.sb?.close();
    await rig.receiver?.close();
  });
  return rig;
}

export async function connectWebhook(client: NetworkClient, receiver: WebhookReceiver): Promise<void> {
  await client.setWebhook({ url: receiver.url });
}

/** A customer writes to the seed number (through the control API); answers the wamid. */
export async function customerSays(
  sb: SandboxHandle,
  waId: string,
  body: Record<string, unknown>,
): Promise<string> {
  const res = await call(sb, 'POST', `/sandbox/customers/${waId}/messages`, body);
  if (res.status !== 200)
    throw new Error(`customer message failed: ${res.status} ${JSON.stringify(res.json)}`);
  return z.object({ id: z.string() }).parse(res.json).id;
}

let waIdCounter = 0;
/** A customer number no other test in the file uses. */
export function newCustomer(): string {
  waIdCounter += 1;
  return `49151${String(Date.now() % 1_000_000).padStart(6, '0')}${String(waIdCounter).padStart(3, '0')}`;
}

/** The NetworkError a call rejects with; throws when it resolves or rejects with anything else. */
export async function networkFailureOf(p: Promise<unknown>): Promise<NetworkError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof NetworkError)) throw new Error(`expected a NetworkError, got ${String(err)}`);
  return err;
}
