import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

/**
 * A start-up failure already phrased for a person: one sentence saying what is wrong and what
 * to do. `npm start` prints the message alone, without a stack.
 */
export class StartupError extends Error {
  override readonly name = 'StartupError';
}

export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Set when the process could not be started at all. */
  error?: Error;
}

export function describeExit(s: ExitStatus): string {
  if (s.error) return s.error.message;
  return s.signal ?? `code ${s.code}`;
}

/** Resolves once the child is gone: after it exited, or at once if it never started. */
export function exitStatus(child: ChildProcess): Promise<ExitStatus> {
  return new Promise((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    // A spawn failure emits 'error' and never 'exit'.
    child.once('error', (error) => {
      if (child.pid === undefined) resolve({ code: null, signal: null, error });
    });
  });
}

/**
 * Sends `signal` to a running child, then SIGKILL if it has not exited `graceMs` later; resolves
 * once `exited` does (at once when the child is gone already).
 */
export async function stopChild(
  child: ChildProcess,
  exited: Promise<unknown>,
  graceMs: number,
  signal: NodeJS.Signals = 'SIGTERM',
): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

const REASONS: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ENOENT: 'file not found',
};

/**
 * Rejects with a StartupError if the child cannot be started (missing binary, permissions).
 * Registering this is what keeps a failed spawn from becoming an unhandled 'error' event.
 */
export function spawnFailure(child: ChildProcess, what: string, remedy = ''): Promise<never> {
  const failed = new Promise<never>((_, reject) => {
    child.on('error', (err: NodeJS.ErrnoException) => {
      const reason = (err.code && REASONS[err.code]) ?? err.message;
      const where = err.path ? ` (${err.path})` : '';
      reject(
        new StartupError(`${what} could not be started: ${reason}${where}.${remedy ? ` ${remedy}` : ''}`),
      );
    });
  });
  // Nobody may be listening any more once the child is running; a later error is not fatal here.
  failed.catch(() => undefined);
  return failed;
}

export interface OutputLines {
  on(listener: (line: string) => void): void;
  off(listener: (line: string) => void): void;
  /** The last lines written, to explain a failure. */
  recent(): string[];
}

/** Splits the child's stdout and stderr into lines, keeps the last 50, and passes each to `log`. */
export function collectLines(child: ChildProcess, log?: (line: string) => void): OutputLines {
  const listeners = new Set<(line: string) => void>();
  const kept: string[] = [];
  for (const stream of [child.stdout, child.stderr]) {
    if (!stream) continue;
    createInterface({ input: stream }).on('line', (line) => {
      kept.push(line);
      if (kept.length > 50) kept.shift();
      log?.(line);
      for (const l of listeners) l(line);
    });
  }
  return {
    on: (l) => listeners.add(l),
    off: (l) => listeners.delete(l),
    recent: () => [...kept],
  };
}
