import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { stopChild } from './infra/process.ts';

/** The repository root, for locating service entry points. */
export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

export interface ServiceProcess {
  readonly child: ChildProcess;
  /** Everything the process wrote so far (stdout and stderr), for assertions and failure output. */
  output(): string;
  /** Sends the signal and resolves with the exit code (SIGKILL after `graceMs`). */
  stop(signal?: NodeJS.Signals, graceMs?: number): Promise<number | null>;
  readonly exited: Promise<number | null>;
}

/** Everything a child process writes, kept for failure messages, and when it exits. */
export function captureOutput(child: ChildProcess): { output(): string; exited: Promise<number | null> } {
  let out = '';
  const keep = (b: Buffer) => {
    out += b.toString();
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { output: () => out, exited };
}

/**
 * Runs a service entry point (`services/x/src/main.ts`) with the same Node binary as the tests;
 * `nodeArgs` go to Node before it (e.g. `--cpu-prof`, which `NODE_OPTIONS` does not take).
 */
export function spawnService(
  entry: string,
  env: Record<string, string>,
  nodeArgs: readonly string[] = [],
): ServiceProcess {
  const child = spawn(process.execPath, [...nodeArgs, entry], {
    cwd: repoRoot,
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const { output, exited } = captureOutput(child);
  return {
    child,
    exited,
    output,
    async stop(signal = 'SIGTERM', graceMs = 10_000) {
      await stopChild(child, exited, graceMs, signal);
      return exited;
    },
  };
}
