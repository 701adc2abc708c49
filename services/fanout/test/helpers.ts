import { randomUUID } from 'node:crypto';
import { connectNats, createDb, createLogger, migrate, type NatsConnection } from '@switchboard/kit';
import {
  fanoutRpc,
  instanceId,
  messagesWebhookBody,
  type NetworkEvent,
  networkEvent,
  type Principal,
  principalLookup,
  type WebhookWithSecret,
} from '@switchboard/proto';
import { type Bus, createBus } from '@switchboard/proto/bus';
import {
  admin,
  freshDatabase,
  type Receiver,
  startReceiver,
  type TestDatabase,
  testNatsUrl,
  uniqueInstanceId,
} from '@switchboard/testkit';
import type { Kysely } from 'kysely';
import { afterAll } from 'vitest';
import { createWebhookSecretsBox } from '../src/adapters/sealing.ts';
import type { FanoutDatabase } from '../src/db.ts';
import { defaultSettings, type FanoutSettings } from '../src/domain/settings.ts';
import { createFanoutMigrations } from '../src/migrations/index.ts';
import { createFanout, type Fanout } from '../src/service.ts';

/** The instance key of every test, the same the inbox tests give the gateway (test/support/inbox.ts). */
export const TEST_SECRET_KEY = 'inbox-test-secret-key-0123456789abcdef';
export const testBox = createWebhookSecretsBox(TEST_SECRET_KEY);

/**
 * The gateway's side of the identity contract for tests without a gateway: answers
 * `gateway.identity.principal` from the principals the test created webhooks as (others are
 * unknown: null, as for a deactivated user).
 */
export function serveTestPrincipals(
  bus: Bus,
  known: Map<number, Principal>,
  /** Lookups still to fail per user, as when the gateway is down. */
  failing: Map<number, number> = new Map(),
) {
  return bus.serve(principalLookup, async ({ user_id }) => {
    const left = failing.get(user_id) ?? 0;
    if (left > 0) {
      failing.set(user_id, left - 1);
      throw new Error('identity is not answering');
    }
    return { principal: known.get(user_id) ?? null };
  });
}

/** Settings for tests: private targets allowed, quick retries without jitter. */
export function testSettings(overrides: Partial<FanoutSettings> = {}): FanoutSettings {
  return defaultSettings({
    allowPrivateTargets: true,
    retry: { schedule: [0, 150, 150, 150, 150], jitter: 0, throttleFloorMs: 60_000, retryAfterCapMs: 10_000 },
    reconcileIntervalMs: 5_000,
    attemptLog: { flushIntervalMs: 50, maxBatch: 500 },
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

export async function publishEvent(
  bus: Bus,
  text = 'hello',
  chats?: NetworkEvent['chats'],
): Promise<NetworkEvent> {
  const eventId = randomUUID();
  const event: NetworkEvent = {
    event_id: eventId,
    kinds: ['message'],
    wa_ids: ['491701234567'],
    ...(chats && { chats }),
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
  /** The next `times` lookups of this user's rights fail, as when the gateway is down. */
  failPrincipalLookups(userId: number, times: number): void;
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
  const failingLookups = new Map<number, number>();
  const principalsServed = serveTestPrincipals(bus, principals, failingLookups);
  const fanout = await createFanout({ db, bus, nc, log, settings, box: testBox });
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
    failPrincipalLookups(userId, times) {
      failingLookups.set(userId, times);
    },
    async startWorker(workerSettings = settings) {
      const wnc = await connectNats(testNatsUrl(), 'fanout-test-worker');
      const wbus = await createBus(wnc, instance);
      const worker = await createFanout({
        db,
        bus: wbus,
        nc: wnc,
        log,
        settings: workerSettings,
        box: testBox,
      });
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

/**
 * Starts receivers for a test file and closes them after its tests: after the file's own
 * `afterAll` when called before it (vitest runs after-hooks last registered first).
 */
export function closingReceivers(): (...args: Parameters<typeof startReceiver>) => Promise<Receiver> {
  const started: Receiver[] = [];
  afterAll(async () => {
    await Promise.all(started.map((r) => r.close()));
  });
  return async (...args) => {
    const r = await startReceiver(...args);
    started.push(r);
    return r;
  };
}
