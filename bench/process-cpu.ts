/**
 * CPU time per process, read from /proc (Linux), for benches that explain a rate by what each
 * process spent on it. The kernel's accounting, not a sampling profiler: a V8 profile charges a
 * socket write with the time the woken reader then runs on the same core.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** /proc/<pid>/stat counts in USER_HZ ticks, 100 per second on Linux. */
const MS_PER_TICK = 10;

function statOf(pid: number): { ppid: number; ms: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // After "pid (comm) " (comm may hold spaces and parentheses): state, ppid, …, utime, stime.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime, stime, and cutime, cstime: children that ended (a PostgreSQL backend whose
    // connection was retired) are counted in their parent once it has waited for them.
    const ticks = Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
    return { ppid: Number(fields[1]), ms: ticks * MS_PER_TICK };
  } catch {
    // Not running, or not Linux.
    return undefined;
  }
}

/** CPU time (user + system) one process has used so far, ms; null where it cannot be read. */
export function cpuMsOf(pid: number | undefined): number | null {
  return pid === undefined ? null : (statOf(pid)?.ms ?? null);
}

/** CPU time this process has used so far, ms. */
export function ownCpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

function processTable(): Map<number, { ppid: number; ms: number }> {
  const table = new Map<number, { ppid: number; ms: number }>();
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return table;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = statOf(Number(entry));
    if (stat) table.set(Number(entry), stat);
  }
  return table;
}

/**
 * CPU time used so far, in ms, by each named process with its descendants (PostgreSQL's
 * backends are children of its postmaster). A root that is not running is left out.
 */
export function cpuMsOfTrees(roots: Readonly<Record<string, number | undefined>>): Record<string, number> {
  const table = processTable();
  const children = new Map<number, number[]>();
  for (const [pid, { ppid }] of table) children.set(ppid, [...(children.get(ppid) ?? []), pid]);
  const treeMs = (pid: number): number =>
    (table.get(pid)?.ms ?? 0) + (children.get(pid) ?? []).reduce((sum, child) => sum + treeMs(child), 0);
  const out: Record<string, number> = {};
  for (const [name, pid] of Object.entries(roots))
    if (pid !== undefined && table.has(pid)) out[name] = treeMs(pid);
  return out;
}

/** Microseconds of CPU per request between two readings, per process and in all. */
export function cpuPerRequest(
  before: Readonly<Record<string, number>>,
  after: Readonly<Record<string, number>>,
  requests: number,
): Record<string, number> {
  const out: Record<string, number> = {};
  let total = 0;
  for (const [name, ms] of Object.entries(after)) {
    const us = Math.round(((ms - (before[name] ?? ms)) * 1000) / requests);
    out[name] = us;
    total += us;
  }
  out.total = total;
  return out;
}
