import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { connect as tcpConnect } from 'node:net';
import { join } from 'node:path';
import { freePort, waitFor } from './ports.ts';

export interface NatsServerHandle {
  readonly url: string;
  readonly port: number;
  readonly process: ChildProcess;
  stop(): Promise<void>;
}

export const NATS_INSTALL_HINT =
  'nats-server was not found on PATH. Install it with `sudo apt-get install -y nats-server` ' +
  '(Debian/Ubuntu), or set NATS_URL to an existing server started with JetStream (-js).';

export function natsServerBinary(): string | undefined {
  for (const candidate of ['nats-server', '/usr/sbin/nats-server', '/usr/local/bin/nats-server']) {
    const r = spawnSync(candidate, ['--version'], { encoding: 'utf8' });
    if (r.status === 0) return candidate;
  }
  return undefined;
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = tcpConnect({ host: '127.0.0.1', port }, () => {
      s.destroy();
      resolve(true);
    });
    s.on('error', () => resolve(false));
  });
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
  if (!bin) throw new Error(NATS_INSTALL_HINT);
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
  // Own process group: on Ctrl-C NATS must outlive the services that are still draining into it.
  const child = spawn(bin, ['-c', configFile], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const log = opts.log;
  if (log) {
    child.stdout?.on('data', (b: Buffer) => log(b.toString()));
    child.stderr?.on('data', (b: Buffer) => log(b.toString()));
  } else {
    child.stdout?.resume();
    child.stderr?.resume();
  }
  let exited = false;
  child.on('exit', () => {
    exited = true;
  });
  await waitFor(
    async () => {
      if (exited) throw new Error(`nats-server exited early (port ${port})`);
      return portOpen(port);
    },
    15_000,
    `nats-server on port ${port}`,
  );
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    process: child,
    async stop() {
      if (exited) return;
      const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await gone;
      clearTimeout(timer);
    },
  };
}
