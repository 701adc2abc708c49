import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connectNats, createDb, createLogger, migrate, type NatsConnection } from '@switchboard/kit';
import { freshDatabase, type TestDatabase, testNatsUrl, uniqueInstanceId } from '@switchboard/kit/testing';
import {
  type Bus,
  createBus,
  fanoutRpc,
  instanceId,
  messagesWebhookBody,
  type NetworkEvent,
  networkEvent,
  type Principal,
  principalLookup,
  type WebhookWithSecret,
} from '@switchboard/proto';
import type { Kysely } from 'kysely';
import type { FanoutDatabase } from '../src/db.ts';
import { createFanoutMigrations } from '../src/migrations/index.ts';
import { createWebhookSecretsBox } from '../src/sealing.ts';
import { createFanout, type Fanout } from '../src/service.ts';
import { defaultSettings, type FanoutSettings } from '../src/settings.ts';

export interface Received {
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  /** Epoch ms when the request arrived. */
  readonly at: number;
  /** Event id parsed from the test body (`entry[0].id`). */
  readonly eventId: string | undefined;
}

export interface Reply {
  status: number;
  headers?: Record<string, string>;
  body?: string;
  /** The receiver answers this late: a slow endpoint. */
  delayMs?: number;
}

export interface Receiver {
  readonly url: string;
  readonly port: number;
  readonly requests: Received[];
  /** Requests whose response has been sent. */
  answered: number;
  /** Requests being handled right now, and the most at once. */
  inFlight: number;
  maxInFlight: number;
  /** Replaces how the receiver answers from now on. */
  setHandler(h: (r: Received, index: number) => Reply): void;
  forEvent(eventId: string): Received[];
  close(): Promise<void>;
}

function eventIdOf(body: string): string | undefined {
  try {
    const parsed = JSON.parse(body) as { entry?: Array<{ id?: unknown }> };
    const id = parsed.entry?.[0]?.id;
    return typeof id === 'string' ? id : undefined;
  } catch {
    return undefined;
  }
}

/** A real HTTP webhook receiver on 127.0.0.1 that records every request. */
export async function startReceiver(
  handler: (r: Received, index: number) => Reply = () => ({ status: 200 }),
): Promise<Receiver> {
  let current = handler;
  const requests: Received[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const receiver: Receiver = {
    url: '',
    port: 0,
    requests,
    answered: 0,
    inFlight: 0,
    maxInFlight: 0,
    setHandler(h) {
      current = h;
    },
    forEvent: (eventId) => requests.filter((r) => r.eventId === eventId),
    close: async () => undefined,
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const r: Received = { headers: req.headers, body, at: Date.now(), eventId: eventIdOf(body) };
      const index = requests.length;
      requests.push(r);
      receiver.inFlight++;
      receiver.maxInFlight = Math.max(receiver.maxInFlight, receiver.inFlight);
      const reply = current(r, index);
      const send = () => {
        timers.delete(timer);
        receiver.inFlight--;
        receiver.answered++;
        res.writeHead(reply.status, { 'content-type': 'text/plain', ...reply.headers });
        res.end(reply.body ?? 'ok');
      };
      const timer = setTimeout(send, reply.delayMs ?? 0);
      timers.add(timer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(receiver, {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    close: async () => {
      for (const t of timers) clearTimeout(t);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
}

export function principal(userId: number, role: Principal['role'] = 'user'): Principal {
  return {
    user_id: userId,
    username: `user${userId}`,
    role,
    group_ids: [],
    permissions: { can_use_tags: true, can_read_chats: 'all', can_write_to_chats: 'all' },
    assigned_wa_ids: [],
  };
}

export const admin = principal(1, 'admin');

/** The instance key of every test, the same the inbox tests give the gateway (test/support/inbox.ts). */
export const TEST_SECRET_KEY = 'inbox-test-secret-key-0123456789abcdef';
export const testBox = createWebhookSecretsBox(TEST_SECRET_KEY);

/**
 * The gateway's side of the identity contract for tests without a gateway: answers
 * `gateway.identity.principal` from the principals the test created webhooks as (others are
 * unknown: null, as for a deactivated user).
 */
export function serveTestPrincipals(bus: Bus, known: Map<number, Principal>) {
  return bus.serve(principalLookup, async ({ user_id }) => ({ principal: known.get(user_id) ?? null }));
}

/** Settings for tests: private targets allowed, quick retries without jitter. */
export function testSettings(overrides: Partial<FanoutSettings> = {}): FanoutSettings {
  return defaultSettings({
    allowPrivateTargets: true,
    retry: { schedule: [0, 150, 150, 150, 150], jitter: 0, throttleFloorMs: 60_000, retryAfterCapMs: 10_000 },
    reconcileIntervalMs: 5_000,
    attemptLog: { flushIntervalMs: 50, maxBatch: 500, maxBuffered: 10_000 },
    ...overrides,
  });
}

/** A network-shaped body whose `entry[0].id` is the event id, so receivers can tell events apart. */
export function networkBody(eventId: string, text = 'hello'): string {
  const number = { wabaId: eventId, displayPhoneNumber: '15550000000', phoneNumberId: '1' };
  return JSON.stringify(
    messagesWebhookBody(number, {
      messages: [
        {
          from: '491701234567',
          id: `wamid.${eventId}`,
          timestamp: '1700000000',
          type: 'text',
          text: { body: text },
        },
      ],
    }),
  );
}

export async function publishEvent(bus: Bus, text = 'hello'): Promise<NetworkEvent> {
  const eventId = randomUUID();
  const event: NetworkEvent = {
    event_id: eventId,
    kinds: ['message'],
    wa_ids: ['491701234567'],
    received_at: Date.now(),
    body: networkBody(eventId, text),
  };
  await bus.publish(networkEvent, event);
  return event;
}

export interface Harness {
  readonly bus: Bus;
  readonly nc: NatsConnection;
  readonly db: Kysely<FanoutDatabase>;
  readonly database: TestDatabase;
  readonly fanout: Fanout;
  readonly settings: FanoutSettings;
  createWebhook(
    url: string,
    opts?: { ordered?: boolean; headers?: Record<string, string>; as?: Principal },
  ): Promise<WebhookWithSecret>;
  /** A second fanout worker on its own connection, sharing the database and the durables. */
  startWorker(settings?: FanoutSettings): Promise<Fanout>;
  stop(): Promise<void>;
}

/** A migrated fresh database, the instance's streams and one running fanout worker. */
export async function startHarness(
  settings: FanoutSettings = testSettings(),
  opts: {
    worker?: boolean;
    /** Runs on the fresh database before the fan-out's migrations (which have then nothing left to do, unless it rewinds them). */
    beforeMigrate?: (db: Kysely<FanoutDatabase>) => Promise<void>;
  } = {},
): Promise<Harness> {
  const database = await freshDatabase('fanout');
  const db = createDb<FanoutDatabase>({ url: database.url, applicationName: 'fanout-test' });
  await opts.beforeMigrate?.(db);
  await migrate(db, 'fanout', createFanoutMigrations(testBox));
  const nc = await connectNats(testNatsUrl(), 'fanout-test');
  const instance = instanceId(uniqueInstanceId('fo'));
  const bus = await createBus(nc, instance);
  await bus.ensureStreams();
  const log = createLogger('fanout-test', process.env.TEST_LOG_LEVEL ?? 'silent');
  const principals = new Map<number, Principal>([[admin.user_id, admin]]);
  const principalsServed = serveTestPrincipals(bus, principals);
  const fanout = await createFanout({ db, bus, log, settings, box: testBox });
  // Without an in-process worker the test runs fanout elsewhere (child processes).
  if (opts.worker !== false) await fanout.start();
  const extra: Array<{ fanout: Fanout; nc: NatsConnection }> = [];

  return {
    bus,
    nc,
    db,
    database,
    fanout,
    settings,
    async createWebhook(url, opts = {}) {
      if (opts.as) principals.set(opts.as.user_id, opts.as);
      return bus.request(fanoutRpc.create, {
        principal: opts.as ?? admin,
        url,
        ...(opts.ordered !== undefined ? { ordered: opts.ordered } : {}),
        ...(opts.headers ? { headers: opts.headers } : {}),
      });
    },
    async startWorker(workerSettings = settings) {
      const wnc = await connectNats(testNatsUrl(), 'fanout-test-worker');
      const wbus = await createBus(wnc, instance);
      const worker = await createFanout({ db, bus: wbus, log, settings: workerSettings, box: testBox });
      await worker.start();
      extra.push({ fanout: worker, nc: wnc });
      return worker;
    },
    async stop() {
      for (const w of extra) {
        await w.fanout.stop();
        await w.nc.drain();
      }
      await fanout.stop();
      principalsServed.unsubscribe();
      await nc.drain();
      await db.destroy();
      await database.drop();
    },
  };
}
