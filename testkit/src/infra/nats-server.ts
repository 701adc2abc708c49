import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { delimiter, join } from 'node:path';
import { z } from 'zod';
import { freePort } from './ports.ts';
import {
  collectLines,
  type ExitStatus,
  exitStatus,
  StartupError,
  spawnFailure,
  stopChild,
} from './process.ts';
import { forgetChild, REAPER_STAGE, watchChild } from './reaper.ts';

export interface NatsServerHandle {
  readonly url: string;
  readonly port: number;
  readonly process: ChildProcess;
  readonly pid: number | undefined;
  /** Resolves when nats-server exits, for whatever reason (stop, crash, kill). */
  readonly exited: Promise<ExitStatus>;
  stop(): Promise<void>;
}

const INSTALL = 'Install it with `sudo apt-get install -y nats-server` (Debian/Ubuntu)';

export const NATS_INSTALL_HINT = `nats-server was not found on PATH. ${INSTALL}, or set NATS_URL to an existing server started with JetStream (-js).`;

/** What to tell a person whose machine has no usable nats-server, in one sentence. */
export function natsMissingMessage(env: NodeJS.ProcessEnv = process.env): string {
  return env.NATS_SERVER_BIN
    ? `nats-server was not found at ${env.NATS_SERVER_BIN} (NATS_SERVER_BIN). ${INSTALL}, or point NATS_SERVER_BIN at the binary, or set NATS_URL to an existing server started with JetStream (-js).`
    : NATS_INSTALL_HINT;
}

/**
 * The nats-server to run: NATS_SERVER_BIN when set, else the first on PATH or in the sbin
 * directories, as Debian installs it to /usr/sbin, which an ordinary user's PATH lacks.
 */
export function natsServerBinary(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const candidates = env.NATS_SERVER_BIN
    ? [env.NATS_SERVER_BIN]
    : [
        ...(env.PATH ?? '').split(delimiter).filter(Boolean),
        '/usr/sbin',
        '/usr/local/sbin',
        '/usr/local/bin',
      ].map((dir) => join(dir, 'nats-server'));
  for (const candidate of candidates) {
    const r = spawnSync(candidate, ['--version'], { encoding: 'utf8' });
    if (r.status === 0) return candidate;
  }
  return undefined;
}

/** The one line worth showing from a nats-server that died while starting. */
function natsFailure(lines: readonly string[], port: number): string {
  const text = lines.join('\n');
  if (/address already in use/i.test(text)) {
    return `nats-server could not listen on port ${port}: another program uses it. Stop that program, or set NATS_URL to use a server of your own.`;
  }
  const fatal = lines.find((l) => l.includes('[FTL]'));
  const detail = (fatal ?? lines.at(-1) ?? 'no output').replace(/^.*\[FTL\]\s*/, '').trim();
  return `nats-server stopped while starting: ${detail}.`;
}

/**
 * The Go scheduler's processors for a nats-server that shares the machine with the services and
 * PostgreSQL: half the cores (at least one) unless `GOMAXPROCS` is set to a positive whole
 * number. With one per core, the server spread each message's goroutines over threads that woke
 * each other: on two cores it spent 68–90 µs of CPU per inbound webhook of
 * `bench/messaging/per-request.ts --phase ingest`, and 53–60 µs with one (bench/messaging/README.md).
 */
export function natsGoMaxProcs(env: NodeJS.ProcessEnv = process.env, cores = availableParallelism()): string {
  // Go would ignore any other value and take every core.
  const given = z.coerce
    .number()
    .int()
    .positive()
    .safeParse(env.GOMAXPROCS || undefined);
  return String(given.success ? given.data : Math.max(1, Math.floor(cores / 2)));
}

/**
 * Starts `nats-server -js` on loopback with its own store directory. max_payload is raised to
 * 8 MB because the network posts webhook bodies of up to 3 MB and they travel whole.
 */
export async function startNatsServer(opts: {
  storeDir: string;
  port?: number;
  log?: (line: string) => void;
}): Promise<NatsServerHandle> {
  const bin = natsServerBinary();
  if (!bin) throw new StartupError(natsMissingMessage());
  const port = opts.port ?? (await freePort());
  await mkdir(opts.storeDir, { recursive: true });
  const configFile = join(opts.storeDir, 'nats-server.conf');
  await writeFile(
    configFile,
    [
      `listen: "127.0.0.1:${port}"`,
      'max_payload: 8MB',
      `jetstream { store_dir: ${JSON.stringify(opts.storeDir)} }`,
      '',
    ].join('\n'),
  );
  // Own process group: a terminal's Ctrl-C must not reach it, as NATS has to outlive the
  // services still draining into it; whoever started it stops it, in order.
  const child = spawn(bin, ['-c', configFile], {
    env: { ...process.env, GOMAXPROCS: natsGoMaxProcs() },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const exited = exitStatus(child);
  const lines = collectLines(child, opts.log);
  const spawned = spawnFailure(child, `nats-server (${bin})`);
  watchChild(child.pid, REAPER_STAGE.nats);
  void exited.then(() => forgetChild(child.pid));

  // "Server is ready" comes from this very process: a port that merely answers could be
  // another server's.
  const ready = new Promise<void>((resolve) => {
    const onLine = (line: string) => {
      if (line.includes('Server is ready')) {
        lines.off(onLine);
        resolve();
      }
    };
    lines.on(onLine);
  });
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      ready,
      spawned,
      exited.then(() => {
        throw new StartupError(natsFailure(lines.recent(), port));
      }),
      new Promise((_, reject) => {
        timer = setTimeout(
          () => reject(new StartupError(`nats-server did not become ready within 15 s (port ${port}).`)),
          15_000,
        );
      }),
    ]);
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  } finally {
    clearTimeout(timer);
  }

  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    process: child,
    pid: child.pid,
    exited,
    stop: () => stopChild(child, exited, 5_000),
  };
}
