import { jetstream } from '@nats-io/jetstream';
import { createOutboxRelay, type Logger, type NatsConnection, type SecretBox } from '@switchboard/kit';
import { type Bus, outboxPublisher } from '@switchboard/proto/bus';
import type { Kysely } from 'kysely';
import { createDeliveryClient } from './adapters/http-client.ts';
import { createAnnouncer, FANOUT_OUTBOX, fanoutOutboxContracts } from './adapters/lifecycle.ts';
import { createOwnerDirectory } from './adapters/owners.ts';
import { checkSecretsKey } from './adapters/sealing.ts';
import type { FanoutDatabase } from './db.ts';
import type { FanoutSettings } from './domain/settings.ts';
import { serveWebhookRpc } from './rpc.ts';
import { createAttemptLog } from './store/attempt-log.ts';
import { createWebhookStore } from './store/deliveries.ts';
import { createWebhookManager, type WebhookManager } from './use-cases/webhooks.ts';
import { createDeliveryEngine } from './workers/engine.ts';
import { createSupervisor, type Supervisor } from './workers/supervisor.ts';

export interface Fanout {
  readonly manager: WebhookManager;
  readonly supervisor: Supervisor;
  /**
   * Refuses a key that does not open the stored secrets, reconciles the consumers, then serves
   * the management requests.
   */
  start(): Promise<void>;
  stats(): { attempts: number; webhooks: number };
  /** Stops taking requests and messages, lets attempts in flight finish, flushes the attempt log. */
  stop(): Promise<void>;
}

/**
 * One fanout worker, wired from its dependencies. The process entry point (server.ts), the
 * single-process inbox (`services/inbox`), the tests and the benchmark all build it the same
 * way; the database must be migrated and the instance's streams must exist.
 */
export async function createFanout(deps: {
  db: Kysely<FanoutDatabase>;
  bus: Bus;
  /** The bus's connection: the fan-out manages its per-webhook durables itself. */
  nc: NatsConnection;
  log: Logger;
  settings: FanoutSettings;
  /** Seals webhook secrets and static headers at rest (see sealing.ts). */
  box: SecretBox;
}): Promise<Fanout> {
  const { db, bus, log, settings, box } = deps;
  const js = jetstream(deps.nc);
  const jsm = await js.jetstreamManager();
  const attemptLog = createAttemptLog({ db, log, ...settings.attemptLog });
  const client = createDeliveryClient(settings);
  const store = createWebhookStore(db, { cacheTtlMs: settings.webhookCacheTtlMs, box });
  // Lifecycle events and event-log entries leave through the outbox, written with the change.
  const outbox = createOutboxRelay({
    db,
    table: FANOUT_OUTBOX,
    publish: outboxPublisher(bus, fanoutOutboxContracts),
    log,
  });
  const announcer = createAnnouncer(outbox);
  const owners = createOwnerDirectory({ bus, log, ttlMs: settings.webhookCacheTtlMs });
  const engine = createDeliveryEngine({
    store,
    client,
    attemptLog,
    owners,
    settings,
    log,
    onDisabled: (row) =>
      void announcer.announce(db, row, 'disabled', null).then(
        () => announcer.committed(),
        (err: unknown) =>
          log.warn({ err, webhook: row.id }, 'disabling not announced; reconcile picks it up'),
      ),
  });
  const manager = createWebhookManager({
    db,
    bus,
    jsm,
    engine,
    settings,
    log,
    announcer,
    box,
    flushAttempts: () => attemptLog.flush(),
  });
  const supervisor = createSupervisor({
    js,
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
      await checkSecretsKey(db, box);
      if (settings.allowPrivateTargets) {
        log.warn('WEBHOOK_ALLOW_PRIVATE_TARGETS is set: webhooks may reach private and loopback addresses');
      }
      outbox.start();
      owners.start();
      await supervisor.start();
      subscriptions = serveWebhookRpc(bus, manager);
    },
    stats: () => ({ attempts: engine.attempts, webhooks: supervisor.running().length }),
    async stop() {
      for (const s of subscriptions) s.unsubscribe();
      owners.stop();
      await supervisor.stop();
      await bus.flush();
      await attemptLog.stop();
      await outbox.stop();
      await client.close();
    },
  };
}
