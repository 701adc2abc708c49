import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export interface ReaperEntry {
  /** Lower stages stop first and are waited for: services 0, NATS 1, PostgreSQL 2. */
  stage: number;
  /** Sent to its process group; none for children that stop by themselves when their parent dies. */
  signal?: NodeJS.Signals;
  /** How long the stage may take before its remaining processes get SIGKILL. */
  graceMs: number;
}

export const REAPER_STAGE = {
  // Services started with an IPC channel stop by themselves when it closes; a signal on top
  // would count as a second one and cut their drain short.
  service: { stage: 0, graceMs: 25_000 },
  nats: { stage: 1, signal: 'SIGTERM', graceMs: 5_000 },
  // SIGINT is PostgreSQL's fast shutdown: roll back open transactions, checkpoint, exit.
  postgres: { stage: 2, signal: 'SIGINT', graceMs: 30_000 },
} as const satisfies Record<string, ReaperEntry>;

let reaper: ChildProcess | undefined;

function send(line: object): void {
  if (!reaper) {
    // Same layout as this file: .ts when run from source, .js from dist.
    const ext = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
    const child = spawn(process.execPath, [fileURLToPath(new URL(`./reaper-main${ext}`, import.meta.url))], {
      // Its stdin is the lifeline: it ends when this process ends, however it ends.
      stdio: ['pipe', 'ignore', 'ignore'],
      // Own session: neither a terminal's Ctrl-C nor a kill of this process group reaches it.
      detached: true,
    });
    // A reaper that could not start must not take its parent down: it only adds a guarantee.
    child.on('error', () => undefined);
    child.stdin?.on('error', () => undefined);
    child.unref();
    const stdin = child.stdin as (NodeJS.WritableStream & { unref?: () => void }) | null;
    stdin?.unref?.();
    reaper = child;
  }
  reaper.stdin?.write(`${JSON.stringify(line)}\n`);
}

/**
 * Hands a child process (leader of its own process group) to this process's reaper: if this
 * process dies without stopping it (SIGKILL, a crash), the reaper stops it, stage by stage,
 * so nothing is orphaned. `forgetChild` once the child has exited.
 */
export function watchChild(pid: number | undefined, entry: ReaperEntry): void {
  if (pid === undefined) return;
  send({ op: 'watch', pid, ...entry });
}

export function forgetChild(pid: number | undefined): void {
  if (pid === undefined || !reaper) return;
  send({ op: 'forget', pid });
}
