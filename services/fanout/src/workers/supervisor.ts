import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import type { Logger, Subscription } from '@switchboard/kit';
import { NetworkEventSchema, streamName, WebhookReplaySchema, webhookLifecycle } from '@switchboard/proto';
import type { Bus } from '@switchboard/proto/bus';
import type { Kysely } from 'kysely';
import type { FanoutDatabase } from '../db.ts';
import type { FanoutSettings } from '../domain/settings.ts';
import { createAckBatcher } from './ack-batcher.ts';
import { type ConsumerLoop, startConsumerLoop } from './consumer-loop.ts';
import {
  deleteDurables,
  durableNames,
  ensureDurables,
  listDurableWebhookIds,
  maxAckPending,
} from './durables.ts';
import type { DeliveryEngine } from './engine.ts';

interface Worker {
  readonly ordered: boolean;
  readonly loops: readonly ConsumerLoop[];
  stopping: boolean;
}

export interface Supervisor {
  start(): Promise<void>;
  /** Brings this process's consumers for one webhook in line with its row. */
  sync(webhookId: string): Promise<void>;
  /** Full pass: every webhook row, every running worker, and durables whose webhook is gone. */
  reconcile(): Promise<void>;
  stop(): Promise<void>;
  /** Webhook ids this process is consuming for. */
  running(): string[];
}

const RESTART_DELAY_MS = 2_000;

/**
 * Runs, in this process, the consumer loops of every enabled webhook. Every fanout process runs
 * the same set: the durables are shared pull consumers, so the processes split the work
 * between them and a process that dies leaves its unacknowledged messages to the others.
 */
export function createSupervisor(deps: {
  bus: Bus;
  /** The JetStream client of the connection the per-webhook durables are pulled on. */
  js: JetStreamClient;
  jsm: JetStreamManager;
  db: Kysely<FanoutDatabase>;
  engine: DeliveryEngine;
  settings: FanoutSettings;
  log: Logger;
  /** Called synchronously when a webhook changed, before any later message is handled. */
  onWebhookChanged: (webhookId: string) => void;
}): Supervisor {
  const { bus, jsm, db, engine, settings, log } = deps;
  const stream = streamName(bus.instance, 'events');
  const workers = new Map<string, Worker>();
  // Changes to one webhook are applied one after another; different webhooks in parallel.
  const queues = new Map<string, Promise<void>>();
  let subscription: Subscription | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const acks = createAckBatcher();

  async function startWorker(id: string, ordered: boolean): Promise<Worker> {
    const maxMessages = maxAckPending(settings, ordered);
    const main = await startConsumerLoop({
      js: deps.js,
      stream,
      durable: durableNames.main(id),
      schema: NetworkEventSchema,
      maxMessages,
      ackWaitMs: settings.ackWaitMs,
      handlerRetryMs: settings.handlerRetryMs,
      acks,
      log,
      handle: (event, ctx) => engine.deliver(id, event, { trigger: 'event', ...ctx }),
    });
    const replay = await startConsumerLoop({
      js: deps.js,
      stream,
      durable: durableNames.replay(id),
      schema: WebhookReplaySchema,
      maxMessages,
      ackWaitMs: settings.ackWaitMs,
      handlerRetryMs: settings.handlerRetryMs,
      acks,
      log,
      handle: async (replayed, ctx) =>
        replayed.webhook_id === id
          ? engine.deliver(id, replayed, { trigger: 'replay', ...ctx })
          : { kind: 'term', reason: 'replay for another webhook' },
    }).catch(async (err: unknown) => {
      await main.stop();
      throw err;
    });
    const worker: Worker = { ordered, loops: [main, replay], stopping: false };
    for (const loop of worker.loops) {
      void loop.done.then(() => {
        // A loop that ended on its own (consumer gone, connection trouble) is restarted by a re-sync.
        if (!worker.stopping && !stopped && workers.get(id) === worker) {
          setTimeout(() => void sync(id), RESTART_DELAY_MS).unref();
          workers.delete(id);
          worker.stopping = true;
          void Promise.allSettled(worker.loops.map((l) => l.stop()));
        }
      });
    }
    return worker;
  }

  async function stopWorker(id: string): Promise<void> {
    const worker = workers.get(id);
    if (!worker) return;
    worker.stopping = true;
    workers.delete(id);
    await Promise.allSettled(worker.loops.map((l) => l.stop()));
  }

  async function apply(id: string): Promise<void> {
    if (stopped) return;
    const row = await db
      .selectFrom('webhooks')
      .select(['id', 'enabled', 'ordered'])
      .where('id', '=', id)
      .executeTakeFirst();
    const current = workers.get(id);
    if (!row?.enabled) {
      if (current) {
        await stopWorker(id);
        log.info({ webhook: id }, 'stopped delivering');
      }
      return;
    }
    if (current && current.ordered === row.ordered) return;
    if (current) await stopWorker(id);
    await ensureDurables(jsm, bus.instance, id, row.ordered, settings);
    if (stopped) return;
    workers.set(id, await startWorker(id, row.ordered));
    log.info({ webhook: id, ordered: row.ordered }, 'delivering');
  }

  function sync(id: string): Promise<void> {
    const previous = queues.get(id) ?? Promise.resolve();
    const next = previous
      .then(() => apply(id))
      .catch((err: unknown) =>
        log.error({ err, webhook: id }, 'webhook sync failed; the next reconcile retries'),
      )
      .finally(() => {
        if (queues.get(id) === next) queues.delete(id);
      });
    queues.set(id, next);
    return next;
  }

  async function reconcile(): Promise<void> {
    // Durables first, rows second: a webhook created in between has its row before its
    // durables, so a durable without a row really is left over from a deleted webhook.
    const durableIds = await listDurableWebhookIds(jsm, bus.instance);
    const rows = await db.selectFrom('webhooks').select(['id']).execute();
    const known = new Set(rows.map((r) => r.id));
    const ids = new Set([...known, ...workers.keys()]);
    await Promise.all([...ids].map((id) => sync(id)));
    for (const id of durableIds) {
      if (known.has(id)) continue;
      await deleteDurables(jsm, bus.instance, id).catch((err: unknown) =>
        log.warn({ err, webhook: id }, 'could not delete a left-over durable'),
      );
    }
  }

  return {
    async start() {
      subscription = bus.subscribe(webhookLifecycle, (event) => {
        // An unreadable one names no webhook; the periodic reconcile covers it.
        if (!event) return;
        deps.onWebhookChanged(event.webhook_id);
        void sync(event.webhook_id);
      });
      await reconcile();
      timer = setInterval(() => {
        reconcile().catch((err: unknown) => log.warn({ err }, 'periodic reconcile failed'));
      }, settings.reconcileIntervalMs);
      timer.unref();
    },
    sync,
    reconcile,
    async stop() {
      stopped = true;
      clearInterval(timer);
      subscription?.unsubscribe();
      await Promise.allSettled([...queues.values()]);
      await Promise.allSettled([...workers.keys()].map((id) => stopWorker(id)));
      acks.flush();
    },
    running: () => [...workers.keys()],
  };
}
