import {
  createFanout,
  createFanoutMigrations,
  createWebhookSecretsBox,
  defaultSettings,
  type Fanout,
  type FanoutDatabase,
  type FanoutSettings,
} from '@switchboard/fanout';
import { connectNats, createDb, createLogger, migrate, type NatsConnection } from '@switchboard/kit';
import { instanceId, type Principal, principalLookup } from '@switchboard/proto';
import { type Bus, createBus } from '@switchboard/proto/bus';
import { admin, freshDatabase, type TestDatabase, testNatsUrl, uniqueInstanceId } from '@switchboard/testkit';
import type { Kysely } from 'kysely';

/** The instance key the inbox tests give every service (test/support/inbox.ts). */
export const TEST_SECRET_KEY = 'inbox-test-secret-key-0123456789abcdef';

export interface FanoutWorker {
  readonly bus: Bus;
  readonly nc: NatsConnection;
  readonly db: Kysely<FanoutDatabase>;
  readonly fanout: Fanout;
  stop(): Promise<void>;
}

/**
 * One fan-out worker in this process, built from `@switchboard/fanout`'s public API, on a fresh
 * database and its own NATS instance: loopback targets allowed, quick retries without jitter.
 * It stands in for the gateway's side of the identity contract, answering principal lookups
 * for `principals` (others are unknown, as a deactivated user).
 */
export async function startFanoutWorker(
  opts: { principals?: Principal[]; settings?: Partial<FanoutSettings> } = {},
): Promise<FanoutWorker> {
  const database: TestDatabase = await freshDatabase('fanout');
  const db = createDb<FanoutDatabase>({ url: database.url, applicationName: 'fanout-test' });
  const box = createWebhookSecretsBox(TEST_SECRET_KEY);
  await migrate(db, 'fanout', createFanoutMigrations(box));
  const nc = await connectNats(testNatsUrl(), 'fanout-test');
  const bus = await createBus(nc, instanceId(uniqueInstanceId('fo')));
  await bus.ensureStreams();
  const known = new Map((opts.principals ?? [admin]).map((p) => [p.user_id, p]));
  const principals = bus.serve(principalLookup, async ({ user_id }) => ({
    principal: known.get(user_id) ?? null,
  }));
  const settings = defaultSettings({
    allowPrivateTargets: true,
    retry: { schedule: [0, 150, 150, 150, 150], jitter: 0, throttleFloorMs: 60_000, retryAfterCapMs: 10_000 },
    reconcileIntervalMs: 5_000,
    attemptLog: { flushIntervalMs: 50, maxBatch: 500 },
    ...opts.settings,
  });
  const log = createLogger('fanout-test', process.env.TEST_LOG_LEVEL ?? 'silent');
  const fanout = await createFanout({ db, bus, nc, log, settings, box });
  await fanout.start();
  return {
    bus,
    nc,
    db,
    fanout,
    async stop() {
      await fanout.stop();
      principals.unsubscribe();
      await nc.drain();
      await db.destroy();
      await database.drop();
    },
  };
}
