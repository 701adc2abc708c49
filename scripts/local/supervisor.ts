import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { formatLogLine } from './log-format.ts';

export interface ServiceSpec {
  name: string;
  entry: string;
  env: Record<string, string>;
}

export interface Supervised {
  readonly name: string;
  stop(): Promise<void>;
}

/**
 * Runs a service as a child process with readable logs, restarting it after a crash with a
 * growing delay (reset once it has stayed up for a minute). `stop()` sends SIGTERM, waits for
 * the service's own graceful shutdown, and SIGKILLs after 25 s.
 */
export function supervise(spec: ServiceSpec, color: boolean): Supervised {
  let child: ChildProcess | undefined;
  let stopping = false;
  let delay = 500;
  let startedAt = 0;

  const start = () => {
    startedAt = Date.now();
    // Own process group: a Ctrl-C in the terminal reaches only the supervisor, which then
    // stops services in order. The IPC channel lets a service notice if the supervisor dies.
    child = spawn(process.execPath, [spec.entry], {
      env: { ...process.env, ...spec.env },
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      detached: true,
    });
    for (const stream of [child.stdout, child.stderr]) {
      if (!stream) continue;
      createInterface({ input: stream }).on('line', (line) => {
        process.stdout.write(`${formatLogLine(spec.name, line, color)}\n`);
      });
    }
    child.once('exit', (code, signal) => {
      if (stopping) return;
      if (Date.now() - startedAt > 60_000) delay = 500;
      process.stdout.write(`[${spec.name}] exited (${signal ?? code}); restarting in ${delay} ms\n`);
      setTimeout(start, delay);
      delay = Math.min(delay * 2, 30_000);
    });
  };
  start();

  return {
    name: spec.name,
    async stop() {
      stopping = true;
      const c = child;
      if (!c || c.exitCode !== null || c.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => c.once('exit', () => resolve()));
      c.kill('SIGTERM');
      const timer = setTimeout(() => c.kill('SIGKILL'), 25_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
