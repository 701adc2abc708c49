import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDb, type Logger, type NatsConnection } from '@switchboard/kit';
import { instanceId } from '@switchboard/proto';
import { type Bus, createBus } from '@switchboard/proto/bus';
import { sql } from 'kysely';
import type { InstanceSpec, Runtime, RuntimeStatus } from './runtime.ts';

/** The host variables an instance process inherits; everything else comes from its spec. */
const HOST_VARIABLES = [
  'PATH',
  'HOME',
  'TMPDIR',
  'TZ',
  'LANG',
  'NODE_OPTIONS',
  'NODE_EXTRA_CA_CERTS',
] as const;

function hostEnvironment(): Record<string, string> {
  return Object.fromEntries(HOST_VARIABLES.flatMap((k) => (process.env[k] ? [[k, process.env[k]]] : [])));
}

export interface LocalRuntimeOptions {
  log: Logger;
  nc: NatsConnection;
  natsStreamReplicas: number;
  /** A URL of the PostgreSQL server whose role may create databases. */
  databaseAdminUrl: string;
  node: string;
  entry: string;
  logDir?: string | undefined;
  /** A supervised instance runs under a new pid (restarted), or none: the caller records it. */
  onPid?: (id: string, pid: number | null) => void;
}

interface Supervised {
  spec: InstanceSpec;
  pid: number | null;
  child: ChildProcess | undefined;
  stopping: boolean;
  restartDelayMs: number;
  startedAt: number;
  timer: NodeJS.Timeout | undefined;
}

const MIN_RESTART_MS = 500;
const MAX_RESTART_MS = 30_000;
const ADOPTED_POLL_MS = 1_000;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A pid is ours to adopt only when that process still runs this instance (pids get reused). */
async function runsInstance(pid: number, id: string): Promise<boolean> {
  if (!alive(pid)) return false;
  try {
    const environ = await readFile(`/proc/${pid}/environ`, 'utf8');
    return environ.split('\0').includes(`INSTANCE_ID=${id}`);
  } catch {
    return false;
  }
}

/**
 * The process running an instance, when the recorded pid is stale (the instance was restarted
 * by a provisioner that died before recording it): found by its environment.
 */
async function findInstanceProcess(id: string): Promise<number | undefined> {
  const entries = await readdir('/proc').catch(() => [] as string[]);
  for (const entry of entries) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    if (await runsInstance(Number(entry), id)) return Number(entry);
  }
  return undefined;
}

/**
 * Instances as supervised child processes of the provisioner: the single-process inbox
 * (`services/inbox`), one per instance, on its own port, database and `INSTANCE_ID` streams.
 * Children run in their own process group and outlive the provisioner, which adopts them
 * again after a restart (checking that the recorded pid still runs that instance); a child
 * that exits unasked is started again, after 0.5 s doubling to 30 s.
 */
export function createLocalRuntime(opts: LocalRuntimeOptions): Runtime {
  const { log } = opts;
  const supervised = new Map<string, Supervised>();
  const logDir = opts.logDir ?? join(tmpdir(), 'switchboard-instances');
  mkdirSync(logDir, { recursive: true });
  const compileCache = join(logDir, '.compile-cache');
  const buses = new Map<string, Bus>();
  let closed = false;

  function spawnChild(s: Supervised): void {
    const out = openSync(join(logDir, `${s.spec.id}.log`), 'a');
    // `--expose-gc`: the instance's media transfers collect their young garbage as they go
    // (services/media/README.md, Memory).
    const child = spawn(opts.node, ['--expose-gc', opts.entry], {
      // Every instance loads the same modules: Node's compile cache, shared by all of them,
      // spares each start most of the parsing (measured: import of the inbox 1.4 s → 0.6–1.0 s).
      // Only what a process needs from the host: the provisioner's own secrets (its sealing key,
      // the hub key, its database and SMTP) never reach a tenant's instance.
      env: { NODE_COMPILE_CACHE: compileCache, ...hostEnvironment(), ...s.spec.env },
      stdio: ['ignore', out, out],
      detached: true,
    });
    closeSync(out);
    child.unref();
    s.child = child;
    s.pid = child.pid ?? null;
    s.startedAt = Date.now();
    opts.onPid?.(s.spec.id, s.pid);
    child.once('error', (err) => log.error({ err, instance: s.spec.id }, 'instance process failed to start'));
    child.once('exit', (code, signal) => {
      s.child = undefined;
      s.pid = null;
      if (s.stopping || closed) return;
      log.warn({ instance: s.spec.id, code, signal }, 'instance process exited; starting it again');
      scheduleRestart(s);
    });
    log.info({ instance: s.spec.id, pid: s.pid, port: s.spec.port }, 'instance process started');
  }

  function scheduleRestart(s: Supervised): void {
    // A run that lasted a minute was healthy: start over from the shortest delay.
    if (Date.now() - s.startedAt > 60_000) s.restartDelayMs = MIN_RESTART_MS;
    const delay = s.restartDelayMs;
    s.restartDelayMs = Math.min(MAX_RESTART_MS, s.restartDelayMs * 2);
    clearTimeout(s.timer);
    s.timer = setTimeout(() => {
      if (!s.stopping && !closed) spawnChild(s);
    }, delay);
    s.timer.unref();
  }

  /** An adopted process is not our child: its exit is noticed by polling. */
  function watchAdopted(s: Supervised): void {
    clearTimeout(s.timer);
    s.timer = setInterval(() => {
      if (s.child || s.pid === null || s.stopping || closed) return;
      if (!alive(s.pid)) {
        clearInterval(s.timer);
        log.warn({ instance: s.spec.id, pid: s.pid }, 'adopted instance process is gone; starting it again');
        s.pid = null;
        s.startedAt = Date.now();
        scheduleRestart(s);
      }
    }, ADOPTED_POLL_MS);
    s.timer.unref();
  }

  async function busFor(id: string): Promise<Bus> {
    let bus = buses.get(id);
    if (!bus) {
      bus = await createBus(opts.nc, instanceId(id), { streamReplicas: opts.natsStreamReplicas });
      buses.set(id, bus);
    }
    return bus;
  }

  async function waitExit(pid: number, ms: number): Promise<boolean> {
    const until = Date.now() + ms;
    while (Date.now() < until) {
      if (!alive(pid)) return true;
      await new Promise((r) => setTimeout(r, 100));
    }
    return !alive(pid);
  }

  async function stopPid(pid: number): Promise<void> {
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      return;
    }
    if (await waitExit(pid, 25_000)) return;
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }

  return {
    async create({ id, databaseName }) {
      const admin = createDb({
        url: opts.databaseAdminUrl,
        applicationName: 'switchboard-provisioner',
        max: 1,
      });
      try {
        const exists = await sql<{
          n: number;
        }>`select 1 as n from pg_database where datname = ${databaseName}`.execute(admin);
        if (exists.rows.length === 0) {
          try {
            await sql.raw(`create database "${databaseName}"`).execute(admin);
          } catch (err) {
            // Another attempt created it meanwhile.
            if ((err as { code?: string }).code !== '42P04') throw err;
          }
        }
      } finally {
        await admin.destroy();
      }
      await (await busFor(id)).ensureStreams();
    },

    async start(spec) {
      const known = supervised.get(spec.id);
      if (known && !known.stopping && (known.child || (known.pid !== null && alive(known.pid)))) {
        return { state: 'running', pid: known.pid };
      }
      const s: Supervised = known ?? {
        spec,
        pid: null,
        child: undefined,
        stopping: false,
        restartDelayMs: MIN_RESTART_MS,
        startedAt: Date.now(),
        timer: undefined,
      };
      s.spec = spec;
      s.stopping = false;
      // A restart already scheduled would start a second process next to this one.
      clearTimeout(s.timer);
      clearInterval(s.timer);
      supervised.set(spec.id, s);
      const running =
        spec.knownPid !== null && (await runsInstance(spec.knownPid, spec.id))
          ? spec.knownPid
          : await findInstanceProcess(spec.id);
      if (running !== undefined) {
        s.pid = running;
        log.info({ instance: spec.id, pid: s.pid }, 'adopted running instance process');
        watchAdopted(s);
      } else {
        spawnChild(s);
      }
      return { state: 'running', pid: s.pid };
    },

    async scaleToZero(id, knownPid) {
      const s = supervised.get(id);
      if (s) {
        s.stopping = true;
        clearTimeout(s.timer);
        clearInterval(s.timer);
      }
      const candidate = s?.pid ?? knownPid;
      // The recorded pid may be stale (restarted by a provisioner that died since): look it up.
      const pid =
        candidate !== null && (s?.child || (await runsInstance(candidate, id)))
          ? candidate
          : await findInstanceProcess(id);
      if (pid !== undefined) await stopPid(pid);
      supervised.delete(id);
    },

    async status(id) {
      const s = supervised.get(id);
      if (!s || s.stopping) return { state: 'stopped', pid: null } satisfies RuntimeStatus;
      if (s.pid !== null && alive(s.pid)) return { state: 'running', pid: s.pid };
      // Between an exit and its restart: still supervised, so still meant to run.
      return { state: 'running', pid: null };
    },

    async close({ stopInstances }) {
      closed = true;
      const all = [...supervised.values()];
      for (const s of all) {
        clearTimeout(s.timer);
        clearInterval(s.timer);
      }
      if (stopInstances) {
        await Promise.all(
          all.map(async (s) => {
            s.stopping = true;
            if (s.pid !== null) await stopPid(s.pid);
          }),
        );
      }
      supervised.clear();
    },
  };
}
