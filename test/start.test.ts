import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { captureOutput, freePort, repoRoot, waitFor } from '@switchboard/testkit';
import { natsServerBinary, ROOT_STATE_DIR, StartupError } from '@switchboard/testkit/infra';
import pg from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { oneLine } from '../scripts/local/failures.ts';
import { nodeVersionProblem } from '../scripts/local/node-version.ts';

const LocalJson = z.object({
  inbox: z.object({ url: z.url(), admin: z.object({ username: z.string(), password: z.string() }) }),
  database_url: z.string(),
  nats_url: z.string(),
  sandbox: z.object({ url: z.url(), phone_number: z.string(), api_key: z.string() }),
});
type LocalJson = z.infer<typeof LocalJson>;

/** `npm start` as a terminal runs it: the leader of its own process group. */
interface Supervisor {
  readonly child: ChildProcess;
  readonly pid: number;
  readonly exited: Promise<number | null>;
  output(): string;
  /** SIGINT to the whole process group, as Ctrl-C in a terminal; resolves with the exit code. */
  ctrlC(): Promise<number | null>;
}

const homes: string[] = [];
const running = new Set<Supervisor>();
afterEach(async () => {
  // A failed test must not leave a product running for the next one.
  for (const s of running) {
    try {
      process.kill(-s.pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
    await s.exited;
  }
  running.clear();
});
afterAll(async () => {
  for (const home of homes) await rm(home, { recursive: true, force: true });
});

async function newHome(): Promise<string> {
  const home = await mkdtemp(join(tmpdir(), 'switchboard-home-'));
  await chmod(home, 0o755);
  homes.push(home);
  return home;
}

function runStart(env: Record<string, string>, cwd = repoRoot): Supervisor {
  const child = spawn(process.execPath, [join(cwd, 'scripts/start.ts')], {
    cwd,
    // Without DATABASE_URL and NATS_URL, `npm start` brings its own PostgreSQL and NATS.
    env: { ...process.env, LOG_LEVEL: 'warn', DATABASE_URL: '', NATS_URL: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const { output, exited } = captureOutput(child);
  if (child.pid === undefined) throw new Error('start.ts did not start');
  const pid = child.pid;
  const s: Supervisor = {
    child,
    pid,
    exited,
    output,
    async ctrlC() {
      process.kill(-pid, 'SIGINT');
      const code = await exited;
      running.delete(s);
      return code;
    },
  };
  running.add(s);
  void exited.then(() => running.delete(s));
  return s;
}

async function readLocal(home: string): Promise<LocalJson | undefined> {
  const parsed = LocalJson.safeParse(
    JSON.parse(await readFile(join(home, 'local.json'), 'utf8').catch(() => 'null')),
  );
  return parsed.success ? parsed.data : undefined;
}

async function startProduct(home: string, port: number, cwd = repoRoot): Promise<[Supervisor, LocalJson]> {
  await rm(join(home, 'local.json'), { force: true });
  const s = runStart({ SWITCHBOARD_HOME: home, INBOX_PORT: String(port) }, cwd);
  await waitFor(
    async () => {
      if (s.child.exitCode !== null) throw new Error(`npm start exited: ${s.output()}`);
      return (await readLocal(home)) !== undefined;
    },
    90_000,
    () => `local.json (${s.output()})`,
  );
  const local = await readLocal(home);
  if (!local) throw new Error('no local.json');
  return [s, local];
}

async function healthStatus(local: LocalJson): Promise<number> {
  return (await fetch(`${local.inbox.url}/api/v1/status/health/`)).status;
}

async function storedWebhooks(databaseUrl: string): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: number }>('select count(*)::int as n from network_webhooks');
    return rows[0]?.n ?? 0;
  } finally {
    await client.end();
  }
}

interface Proc {
  pid: number;
  ppid: number;
  comm: string;
  cmdline: string;
}

/** The product on a new home and a free port, answering health 200. */
async function healthyProduct(): Promise<{ home: string; s: Supervisor; local: LocalJson }> {
  const home = await newHome();
  const [s, local] = await startProduct(home, await freePort());
  await waitFor(async () => (await healthStatus(local)) === 200, 30_000, 'health 200');
  return { home, s, local };
}

/**
 * Every live process started for this home, found by the SWITCHBOARD_HOME each one inherits
 * (services, nats-server, PostgreSQL and its backends, the reaper).
 */
async function processesOf(home: string): Promise<Proc[]> {
  const found: Proc[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const env = await readFile(`/proc/${name}/environ`, 'latin1');
      if (!env.split('\0').includes(`SWITCHBOARD_HOME=${home}`)) continue;
      const stat = await readFile(`/proc/${name}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      const [state, ppid] = stat.slice(close + 2).split(' ');
      if (state === 'Z') continue;
      const cmdline = (await readFile(`/proc/${name}/cmdline`, 'utf8')).split('\0').join(' ').trim();
      found.push({
        pid: Number(name),
        ppid: Number(ppid),
        comm: stat.slice(stat.indexOf('(') + 1, close),
        cmdline,
      });
    } catch {
      // Exited meanwhile.
    }
  }
  return found;
}

/** Waits until no process of this home is left, naming those that still are when it gives up. */
async function noProcessLeft(home: string, timeoutMs: number): Promise<void> {
  let left: Proc[] = [];
  await waitFor(
    async () => {
      left = await processesOf(home);
      return left.length === 0;
    },
    timeoutMs,
    () => `no process left (still: ${left.map((p) => `${p.pid} ${p.cmdline}`).join('; ')})`,
  );
}

async function childOf(s: Supervisor, home: string, comm: string): Promise<Proc | undefined> {
  return (await processesOf(home)).find((p) => p.ppid === s.pid && p.comm === comm);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** True while PostgreSQL takes new connections; false once it refuses them (shut down or shutting down). */
async function acceptsConnections(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * A copy of this working tree inside a mode-700 directory, like a clone in root's home:
 * sources copied, node_modules hard-linked (a symlink would not do: Node resolves it back
 * to this tree, which others can enter). Hard links need the same file system, so the copy
 * goes under tmpdir, else under the repository's own .switchboard/.
 */
async function privateCopy(): Promise<string> {
  for (const base of [tmpdir(), join(repoRoot, '.switchboard')]) {
    await mkdir(base, { recursive: true });
    // mkdtemp makes it 0700.
    const parent = await mkdtemp(join(base, 'switchboard-private-'));
    homes.push(parent);
    const clone = join(parent, 'clone');
    await mkdir(clone);
    if (spawnSync('cp', ['-al', join(repoRoot, 'node_modules'), clone]).status !== 0) {
      await rm(parent, { recursive: true, force: true });
      continue;
    }
    // Every workspace's top directory (a new package must not be forgotten here).
    const manifest = JSON.parse(await readFile(join(repoRoot, 'package.json'), 'utf8')) as {
      workspaces: string[];
    };
    const workspaceRoots = [...new Set(manifest.workspaces.map((w) => w.split('/')[0] ?? w))];
    const sources = ['package.json', 'tsconfig.json', 'tsconfig.base.json', 'scripts', ...workspaceRoots];
    const copied = spawnSync('cp', ['-a', ...sources.map((f) => join(repoRoot, f)), clone]);
    if (copied.status !== 0) throw new Error(`copying the sources failed: ${copied.stderr.toString()}`);
    return clone;
  }
  throw new Error('no directory on the file system of node_modules for a private copy');
}

/** Listens on `port` as soon as it is free (a killed process releases it a moment later). */
async function occupy(port: number): Promise<Server> {
  const deadline = Date.now() + 2_000;
  for (;;) {
    const server = createServer();
    const error = await new Promise<Error | undefined>((resolve) => {
      server.once('error', resolve);
      server.listen(port, '127.0.0.1', () => resolve(undefined));
    });
    if (!error) return server;
    if (Date.now() > deadline) throw error;
    await new Promise((r) => setTimeout(r, 10));
  }
}

const linux = process.platform === 'linux';

describe('npm start', () => {
  it('runs the product with embedded PostgreSQL and NATS, stops cleanly, and keeps its data', async () => {
    const home = await newHome();
    const port = await freePort();

    const [firstRun, first] = await startProduct(home, port);
    // The local network is the sandbox, and chats registered the inbox's webhook with it.
    await waitFor(
      async () =>
        JSON.stringify(await (await fetch(`${first.sandbox.url}/sandbox/numbers`)).json()).includes(
          `${first.inbox.url}/api/v1/waba/webhook/`,
        ),
      20_000,
      'webhook registration',
    );
    expect(first.inbox.url).toBe(`http://127.0.0.1:${port}`);
    const health = await fetch(`${first.inbox.url}/api/v1/status/health/`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });

    // A customer writes through the local network (the sandbox), which posts the signed webhook.
    const posted = await fetch(`${first.sandbox.url}/sandbox/customers/491711111111/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'text', text: { body: 'hello from the start test' } }),
    });
    expect(posted.status).toBeLessThan(300);
    await waitFor(async () => (await storedWebhooks(first.database_url)) === 1, 20_000, 'webhook stored');

    // The printed admin credentials work.
    const token = await fetch(`${first.inbox.url}/api/v1/auth/token/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(first.inbox.admin),
    });
    expect(token.status).toBe(200);
    const { token: adminToken } = z.object({ token: z.string() }).parse(await token.json());

    expect(await firstRun.ctrlC()).toBe(0);

    const [secondRun, second] = await startProduct(home, port);
    expect((await fetch(`${second.inbox.url}/api/v1/status/health/`)).status).toBe(200);
    expect(await storedWebhooks(second.database_url)).toBe(1);
    // Same admin, same token: the secret key and the database survived the restart.
    expect(second.inbox.admin).toEqual(first.inbox.admin);
    const me = await fetch(`${second.inbox.url}/api/v1/users/me/`, {
      headers: { authorization: `Token ${adminToken}` },
    });
    expect(me.status, await me.clone().text()).toBe(200);
    expect(await secondRun.ctrlC()).toBe(0);
  }, 180_000);

  it.skipIf(!linux)(
    'heals itself: nats-server and PostgreSQL killed with SIGKILL come back on the same port and data',
    async () => {
      const { home, s, local } = await healthyProduct();
      const before = await storedWebhooks(local.database_url);

      const nats = await childOf(s, home, 'nats-server');
      expect(nats, s.output()).toBeDefined();
      process.kill(nats?.pid ?? 0, 'SIGKILL');
      // Someone takes its port before the restart (due after 500 ms): one clear line, and
      // retries until the port is free again.
      const natsPort = Number(new URL(local.nats_url).port);
      const blocker = await occupy(natsPort);
      await waitFor(
        async () =>
          s
            .output()
            .includes(
              `[nats] could not come back: nats-server could not listen on port ${natsPort}: another program uses it.`,
            ),
        20_000,
        () => `the could-not-come-back line (${s.output().slice(-2_000)})`,
      );
      await new Promise((resolve) => blocker.close(resolve));
      await waitFor(
        async () => {
          const again = await childOf(s, home, 'nats-server');
          return again !== undefined && again.pid !== nats?.pid && (await healthStatus(local)) === 200;
        },
        30_000,
        () => `nats-server back and health 200 (${s.output().slice(-2_000)})`,
      );
      expect(s.output()).toMatch(/\[nats\] exited \(SIGKILL\); restarting in \d+ ms/);

      const postmaster = await childOf(s, home, 'postgres');
      expect(postmaster, s.output()).toBeDefined();
      process.kill(postmaster?.pid ?? 0, 'SIGKILL');
      await waitFor(
        async () => {
          const again = await childOf(s, home, 'postgres');
          return again !== undefined && again.pid !== postmaster?.pid && (await healthStatus(local)) === 200;
        },
        60_000,
        () => `PostgreSQL back and health 200 (${s.output().slice(-2_000)})`,
      );
      expect(s.output()).toMatch(/\[postgres\] exited \(SIGKILL\); restarting in \d+ ms/);
      // Same URL as in local.json (same port), same data.
      expect(await storedWebhooks(local.database_url)).toBe(before);

      expect(await s.ctrlC()).toBe(0);
    },
    180_000,
  );

  it.skipIf(!linux)(
    'Ctrl-C reaches only the supervisor: services stop while PostgreSQL still answers, NATS and PostgreSQL after, nothing is left',
    async () => {
      const { home, s, local } = await healthyProduct();
      const services = (await processesOf(home)).filter(
        (p) => p.ppid === s.pid && p.cmdline.includes('/services/'),
      );
      expect(services.map((p) => p.cmdline.match(/services\/(\w+)\//)?.[1]).sort()).toEqual([
        'chats',
        'fanout',
        'gateway',
        // the gateway in partner mode
        'gateway',
        'media',
        'provisioner',
        'sandbox',
      ]);

      process.kill(-s.pid, 'SIGINT');
      // Every round: while any service still runs, PostgreSQL must still take connections.
      const refusedWhileServicesRan: string[] = [];
      while (s.child.exitCode === null) {
        const accepting = await acceptsConnections(local.database_url);
        const stillRunning = services.filter((p) => alive(p.pid)).map((p) => p.cmdline);
        if (!accepting && stillRunning.length > 0) refusedWhileServicesRan.push(...stillRunning);
        if (stillRunning.length === 0) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(await s.exited).toBe(0);
      expect(refusedWhileServicesRan).toEqual([]);

      const out = s.output();
      const at = (line: string) => {
        expect(out).toContain(line);
        return out.indexOf(line);
      };
      const servicesStopped = Math.max(
        ...['sandbox', 'gateway', 'chats', 'fanout', 'media'].map((n) => at(`[${n}] stopped`)),
      );
      expect(servicesStopped).toBeLessThan(at('[nats] stopped'));
      expect(at('[nats] stopped')).toBeLessThan(at('[postgres] stopped'));
      // Nothing died on its own along the way (a Ctrl-C reaching PostgreSQL directly would).
      expect(out).not.toMatch(/exited \(|could not come back/);

      await noProcessLeft(home, 10_000);
    },
    180_000,
  );

  it.skipIf(!linux)(
    'leaves no process behind when the supervisor itself is killed with SIGKILL',
    async () => {
      const { home, s } = await healthyProduct();
      expect((await processesOf(home)).some((p) => p.comm === 'postgres')).toBe(true);

      process.kill(s.pid, 'SIGKILL');
      await s.exited;
      // Services stop when their IPC channel closes; the reaper then stops NATS, then PostgreSQL.
      await noProcessLeft(home, 60_000);
    },
    180_000,
  );

  it.skipIf(!linux || process.getuid?.() !== 0)(
    'runs as root from a directory only root can enter (a clone in /root): PostgreSQL runs as postgres',
    async () => {
      const clone = await privateCopy();
      const home = join(clone, '.switchboard');
      const [s, local] = await startProduct(home, await freePort(), clone);
      await waitFor(
        async () => (await healthStatus(local)) === 200,
        30_000,
        () => `health 200 (${s.output()})`,
      );

      const postmaster = await childOf(s, home, 'postgres');
      const status = await readFile(`/proc/${postmaster?.pid}/status`, 'utf8');
      expect(status).not.toMatch(/^Uid:\s+0\s/m);
      // The postgres user cannot enter the clone: binaries and data live where it can.
      const dataDir = /PostgreSQL is running on port \d+ \(data in (.+)\)/.exec(s.output())?.[1] ?? '';
      expect(dataDir.startsWith(`${ROOT_STATE_DIR}/`), s.output()).toBe(true);
      expect(postmaster?.cmdline).toContain(`${ROOT_STATE_DIR}/postgres-`);

      expect(await s.ctrlC()).toBe(0);
      await rm(dataDir, { recursive: true, force: true });
    },
    180_000,
  );
});

// Each of these fails within a second; a minute means it hangs instead of failing.
describe('npm start failures are one sentence with the remedy', { timeout: 30_000 }, () => {
  const noStack = (out: string) => {
    const lines = out.trim().split('\n');
    expect(lines, out).toHaveLength(1);
    expect(out).not.toMatch(/^\s+at /m);
    expect(lines[0]).toMatch(/^start failed: .+\.$/);
    return lines[0] ?? '';
  };

  it('nats-server missing: how to install it', async () => {
    const home = await newHome();
    // A PATH with Node.js and nothing else; NATS_SERVER_BIN covers the sbin directories.
    const s = runStart({
      SWITCHBOARD_HOME: home,
      PATH: dirname(process.execPath),
      NATS_SERVER_BIN: join(home, 'no-nats-server-here'),
    });
    expect(await s.exited).toBe(1);
    const line = noStack(s.output());
    expect(line).toContain('nats-server was not found');
    expect(line).toContain('apt-get install -y nats-server');
    // Found out before anything was started.
    expect(await readdir(home)).toEqual([]);
  });

  it('nats-server is looked for on PATH and in the sbin directories, or only where NATS_SERVER_BIN says', () => {
    expect(
      natsServerBinary({ PATH: dirname(process.execPath), NATS_SERVER_BIN: '/nonexistent/nats-server' }),
    ).toBe(undefined);
    const found = natsServerBinary({ PATH: '' });
    if (found) expect(natsServerBinary({ PATH: '', NATS_SERVER_BIN: found })).toBe(found);
  });

  it('INBOX_PORT taken: names the variable', async () => {
    const home = await newHome();
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const address = blocker.address();
    const taken = typeof address === 'object' && address ? address.port : 0;
    try {
      const s = runStart({ SWITCHBOARD_HOME: home, INBOX_PORT: String(taken) });
      expect(await s.exited).toBe(1);
      expect(noStack(s.output())).toContain(`Port ${taken} (INBOX_PORT) is taken`);
    } finally {
      blocker.close();
    }
  });

  it('DATABASE_URL unreachable: says which server, without its password', async () => {
    const home = await newHome();
    const port = await freePort();
    const s = runStart({ SWITCHBOARD_HOME: home, DATABASE_URL: `postgres://u:secret@127.0.0.1:${port}/db` });
    expect(await s.exited).toBe(1);
    const line = noStack(s.output());
    expect(line).toContain(
      `Cannot use the PostgreSQL at postgres://u:***@127.0.0.1:${port}/db (DATABASE_URL)`,
    );
    expect(line).not.toContain('secret');
  });

  it('NATS_URL unreachable: says so', async () => {
    const home = await newHome();
    const port = await freePort();
    const s = runStart({ SWITCHBOARD_HOME: home, NATS_URL: `nats://127.0.0.1:${port}` });
    expect(await s.exited).toBe(1);
    expect(noStack(s.output())).toContain(`Cannot reach NATS at nats://127.0.0.1:${port} (NATS_URL)`);
  });

  it('Node.js too old, permission problems and start-up errors read as sentences', () => {
    expect(nodeVersionProblem('24.21.0')).toBeUndefined();
    expect(nodeVersionProblem('v20.11.1')).toMatch(
      /^Switchboard needs Node\.js 24, but this is Node\.js 20\.11\.1; run `npm ci`/,
    );
    const denied = Object.assign(new Error("EACCES: permission denied, mkdir '/root/x'"), {
      code: 'EACCES',
      path: '/root/x',
    });
    expect(oneLine(denied)).toBe(
      'Permission denied on /root/x (EACCES); run from a directory you own, or set SWITCHBOARD_HOME to a directory you can write.',
    );
    expect(oneLine(new StartupError('Exactly this.'))).toBe('Exactly this.');
    expect(oneLine(new Error('first line\n    at somewhere'))).toBe('first line.');
  });
});
