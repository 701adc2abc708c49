import type { Logger } from '@switchboard/kit';
import type { Bus } from '@switchboard/proto';
import type { Kysely } from 'kysely';
import type { FanoutDatabase } from './db.ts';
import { createAttemptLog } from './delivery/attempt-log.ts';
import { createDeliveryEngine } from './delivery/engine.ts';
import { createDeliveryClient } from './delivery/http-client.ts';
import { createWebhookStore } from './delivery/store.ts';
import { createSupervisor, type Supervisor } from './delivery/supervisor.ts';
import { createAnnouncer } from './lifecycle.ts';
import { createWebhookManager, type WebhookManager } from './management.ts';
import { serveWebhookRpc } from './rpc.ts';
import type { FanoutSettings } from './settings.ts';

export interface Fanout {
  readonly manager: WebhookManager;
  readonly supervisor: Supervisor;
  /** Reconciles the consumers, then serves the management requests. */
  start(): Promise<void>;
  stats(): { attempts: number; webhooks: number };
  /** Stops taking requests and messages, lets attempts in flight finish, flushes the attempt log. */
  stop(): Promise<void>;
}

/**
 * One fanout worker, wired from its dependencies. The process entry point (server.ts), the
 * tests and the benchmark all build it the same way; the database must be migrated and the
 * instance's streams must exist.
 */
export async function createFanout(deps: {
  db: Kysely<FanoutDatabase>;
  bus: Bus;
  log: Logger;
  settings: FanoutSettings;
}): Promise<Fanout> {
  const { db, bus, log, settings } = deps;
  const jsm = await bus.js.jetstreamManager();
  const attemptLog = createAttemptLog({ db, log, ...settings.attemptLog });
  const client = createDeliveryClient(settings);
  const store = createWebhookStore(db, { cacheTtlMs: settings.webhookCacheTtlMs });
  const announce = createAnnouncer(bus, log);
  const engine = createDeliveryEngine({
    store,
    client,
    attemptLog,
    settings,
    log,
    onDisabled: (row) => void announce(row, 'disabled', null),
  });
  const manager = createWebhookManager({
    db,
    bus,
    jsm,
    engine,
    settings,
    log,
    announce,
    flushAttempts: () => attemptLog.flush(),
  });
  const supervisor = createSupervisor({
    bus,
    jsm,
    db,
    engine,
    settings,
    log,
    onWebhookChanged: (id) => store.invalidate(id),
  });
  let subscriptions: ReturnType<typeof serveWebhookRpc> = [];

  return {
    manager,
    supervisor,
    async start() {
      await supervisor.start();
      subscriptions = serveWebhookRpc(bus, manager);
    },
    stats: () => ({ attempts: engine.attempts, webhooks: supervisor.running().length }),
    async stop() {
      for (const s of subscriptions) s.unsubscribe();
      await supervisor.stop();
      await bus.nc.flush();
      await attemptLog.stop();
      await client.close();
    },
  };
}
