/**
 * The reaper's own process (see reaper.ts). It reads watch/forget lines on stdin; when stdin
 * ends, the process that spawned it is gone, and whatever it still watched is stopped here, in
 * stage order, so a supervisor killed with SIGKILL leaves no nats-server or PostgreSQL behind.
 * Node built-ins only: it must start from any layout (src with type stripping, or dist).
 */
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

interface Watched {
  stage: number;
  /** None: it stops by itself when its parent dies (an IPC channel closing). */
  signal: NodeJS.Signals | undefined;
  graceMs: number;
  /** /proc start time when first seen: a recycled pid must not be signalled. */
  startTime: string | undefined;
}

const watched = new Map<number, Watched>();

function procStat(pid: number): { state: string; startTime: string } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may contain spaces and parentheses; fields start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0] ?? '', startTime: fields[19] ?? '' };
  } catch {
    return undefined;
  }
}

/** Alive and still the process that was registered; a zombie counts as gone (nothing to stop). */
function alive(pid: number, w: Watched): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const stat = procStat(pid);
  if (!stat) return w.startTime === undefined;
  return stat.state !== 'Z' && (w.startTime === undefined || stat.startTime === w.startTime);
}

/** Signals the process group (every watched child leads its own), else the pid alone. */
function signal(pid: number, sig: NodeJS.Signals, groupOnly = false): void {
  try {
    process.kill(-pid, sig);
  } catch {
    if (groupOnly) return;
    try {
      process.kill(pid, sig);
    } catch {
      // Already gone.
    }
  }
}

async function reap(): Promise<void> {
  const stages = [...new Set([...watched.values()].map((w) => w.stage))].sort((a, b) => a - b);
  for (const stage of stages) {
    const members = [...watched].filter(([pid, w]) => w.stage === stage && alive(pid, w));
    for (const [pid, w] of members) if (w.signal) signal(pid, w.signal);
    const deadline = Date.now() + Math.max(0, ...members.map(([, w]) => w.graceMs));
    while (members.some(([pid, w]) => alive(pid, w)) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
    }
    for (const [pid, w] of members) if (alive(pid, w)) signal(pid, 'SIGKILL');
    // A leader can leave members behind in its group (PostgreSQL backends); the group id stays
    // reserved while any member lives, so this reaches only them.
    for (const [pid] of members) signal(pid, 'SIGKILL', true);
  }
}

const WatchLine = (
  v: unknown,
): v is { op: 'watch'; pid: number; stage: number; signal?: string; graceMs: number } =>
  typeof v === 'object' &&
  v !== null &&
  'op' in v &&
  v.op === 'watch' &&
  'pid' in v &&
  typeof v.pid === 'number' &&
  'stage' in v &&
  typeof v.stage === 'number' &&
  (!('signal' in v) || typeof v.signal === 'string') &&
  'graceMs' in v &&
  typeof v.graceMs === 'number';

const ForgetLine = (v: unknown): v is { op: 'forget'; pid: number } =>
  typeof v === 'object' &&
  v !== null &&
  'op' in v &&
  v.op === 'forget' &&
  'pid' in v &&
  typeof v.pid === 'number';

const lines = createInterface({ input: process.stdin });
lines.on('line', (line) => {
  let msg: unknown;
  try {
    msg = JSON.parse(line);
  } catch {
    return;
  }
  if (WatchLine(msg)) {
    watched.set(msg.pid, {
      stage: msg.stage,
      signal: msg.signal as NodeJS.Signals | undefined,
      graceMs: msg.graceMs,
      startTime: procStat(msg.pid)?.startTime,
    });
  } else if (ForgetLine(msg)) {
    watched.delete(msg.pid);
  }
});
lines.on('close', () => {
  void reap().finally(() => process.exit(0));
});
