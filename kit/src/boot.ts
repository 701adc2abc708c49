import { classifyFailure, InstanceIdSchema } from '@switchboard/proto';
import { type Bus, createBus } from '@switchboard/proto/bus';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import { envBoolean, logLevel, natsStreamReplicas } from './config.ts';
import { createDb, type Migration, migrate } from './db.ts';
import { handleShutdown } from './lifecycle.ts';
import { createLogger, type Logger } from './logger.ts';
import { connectNats, type NatsConnection } from './nats.ts';
import type { Telemetry } from './telemetry.ts';

/** The environment every service of an instance reads; each service's schema extends it. */
export const BaseEnvSchema = z.object({
  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }),
  /** Off behind a pooler that switches server connections per transaction (`prepared-statements.ts`). */
  DATABASE_PREPARED_STATEMENTS: envBoolean.default(true),
  NATS_URL: z.string().min(1).default('nats://127.0.0.1:4222'),
  NATS_STREAM_REPLICAS: natsStreamReplicas,
  INSTANCE_ID: InstanceIdSchema.default('local'),
  LOG_LEVEL: logLevel,
});
export type BaseEnv = z.output<typeof BaseEnvSchema>;

/** A process's connection to its instance: the NATS connection and the bus over it. */
export interface BusConnection {
  nc: NatsConnection;
  bus: Bus;
}

export interface Booted<DB> extends BusConnection {
  log: Logger;
  db: Kysely<DB>;
}

/**
 * What a service's composition root is built from: its database, the bus, its logger and its
 * configuration (a root that uses the NATS connection itself asks for `nc` besides).
 */
export interface ServiceDeps<DB, Config> {
  db: Kysely<DB>;
  bus: Bus;
  log: Logger;
  config: Config;
}

/**
 * Connects NATS (named `<name>/<instance>`), builds the instance's bus on it and ensures the
 * instance's streams. Every request handler that fails unexpectedly is logged on `log`.
 */
export async function connectBus(opts: {
  name: string;
  config: BaseEnv;
  log: Logger;
}): Promise<BusConnection> {
  const { name, config, log } = opts;
  const nc = await connectNats(config.NATS_URL, `${name}/${config.INSTANCE_ID}`);
  const bus = await createBus(nc, config.INSTANCE_ID, {
    streamReplicas: config.NATS_STREAM_REPLICAS,
    // A request handler's unexpected failure reaches the caller only as `internal_error`.
    onServeError: (err, at) => log.error({ err, ...at }, 'request handler failed'),
  });
  await bus.ensureStreams();
  return { nc, bus };
}

/**
 * What every service does first, in the same order: logger, database pool, its own migrations
 * (under the service's migration lock), NATS, the instance's bus with its streams, and a log
 * line for every request handler that fails unexpectedly.
 *
 * Several services in one process (`services/inbox`) pass `shared`: the process's logger (each
 * service logs on a child of it with `service` set) and its one NATS connection and bus; each
 * service still gets its own pool and applies its own migrations.
 */
export async function bootService<DB>(opts: {
  service: string;
  config: BaseEnv;
  migrations: readonly Migration[];
  shared?: BusConnection & { log: Logger };
}): Promise<Booted<DB>> {
  const { service, config, shared } = opts;
  const log = shared ? shared.log.child({ service }) : createLogger(service, config.LOG_LEVEL);
  const db = createDb<DB>({
    url: config.DATABASE_URL,
    applicationName: `switchboard-${service}`,
    preparedStatements: config.DATABASE_PREPARED_STATEMENTS,
  });
  const applied = await untilReachable(log, 'database', () => migrate(db, service, opts.migrations));
  if (applied.length) log.info({ applied }, 'migrations applied');
  const { nc, bus } = shared ?? (await connectBus({ name: service, config, log }));
  return { log, db, nc, bus };
}

/**
 * Retries a start-up step while its dependency is only passing through an outage (PostgreSQL
 * restarting: "the database system is starting up"), for up to a minute, so a supervisor's
 * restart backoff does not stretch a short outage. Anything else fails the start at once.
 */
async function untilReachable<T>(
  log: Logger,
  what: string,
  step: () => Promise<T>,
  deadlineMs = 60_000,
): Promise<T> {
  const started = Date.now();
  for (let attempt = 1; ; attempt++) {
    try {
      return await step();
    } catch (err) {
      if (classifyFailure(err).class !== 'transient' || Date.now() - started > deadlineMs) throw err;
      const delayMs = Math.min(5_000, 250 * 2 ** Math.min(attempt - 1, 5));
      log.warn({ err, attempt, delayMs }, `${what} not reachable yet; retrying`);
      await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
  }
}

/** What a service's composition root builds: started once booted, stopped first on shutdown. */
export interface StartStop {
  start(): Promise<unknown>;
  stop(): Promise<void>;
}

/**
 * A service as its own process: boots it (`bootService`), starts what `create` builds, and on
 * SIGTERM or SIGINT stops it, then drains NATS, closes the database pool and flushes telemetry.
 */
export async function runService<DB>(opts: {
  service: string;
  config: BaseEnv;
  migrations: readonly Migration[];
  telemetry: Telemetry;
  create: (booted: Booted<DB>) => StartStop | Promise<StartStop>;
}): Promise<void> {
  const { service, telemetry } = opts;
  const booted = await bootService<DB>(opts);
  const running = await opts.create(booted);
  await running.start();

  handleShutdown(booted.log, [
    [service, () => running.stop()],
    ['nats', () => booted.nc.drain()],
    ['database', () => booted.db.destroy()],
    ['telemetry', () => telemetry.shutdown()],
  ]);
}
