/**
 * The process tree of one `npm start`, read from /proc: which pid plays which part, so the
 * chaos run can kill a part the way the kernel (OOM killer) or an operator would.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { basename } from 'node:path';

export type Role = 'gateway' | 'chats' | 'fanout' | 'sandbox' | 'nats' | 'postgres';

export interface Proc {
  readonly pid: number;
  readonly ppid: number;
  readonly cmd: readonly string[];
}

function readProc(pid: number): Proc | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may hold spaces and parentheses: fields start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const state = fields[0];
    if (state === 'Z' || state === 'X') return undefined;
    const ppid = Number(fields[1]);
    const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    return { pid, ppid, cmd };
  } catch {
    return undefined;
  }
}

export function allProcs(): Proc[] {
  const out: Proc[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const p = readProc(Number(name));
    if (p) out.push(p);
  }
  return out;
}

/** Every live descendant of `root` (not `root` itself), found through the ppid links. */
export function descendants(root: number, procs: readonly Proc[] = allProcs()): Proc[] {
  const children = new Map<number, Proc[]>();
  for (const p of procs) {
    const list = children.get(p.ppid) ?? [];
    list.push(p);
    children.set(p.ppid, list);
  }
  const out: Proc[] = [];
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.shift() as number;
    for (const c of children.get(pid) ?? []) {
      out.push(c);
      queue.push(c.pid);
    }
  }
  return out;
}

/** What a process is, from its command line; undefined for anything else (npm, sh, reaper, backends). */
export function roleOf(p: Proc): Role | undefined {
  const joined = p.cmd.join(' ');
  for (const svc of ['gateway', 'chats', 'fanout', 'sandbox'] as const) {
    if (joined.includes(`services/${svc}/src/main.ts`)) return svc;
  }
  const exe = basename(p.cmd[0] ?? '');
  if (exe === 'nats-server') return 'nats';
  // The postmaster keeps its command line; backends retitle themselves ("postgres: …").
  if (exe === 'postgres' && p.cmd.includes('-D')) return 'postgres';
  return undefined;
}

/** The pid of each role among the descendants of the `npm start` process. */
export function rolesUnder(root: number): Map<Role, number[]> {
  const out = new Map<Role, number[]>();
  for (const p of descendants(root)) {
    const role = roleOf(p);
    if (!role) continue;
    out.set(role, [...(out.get(role) ?? []), p.pid]);
  }
  return out;
}

function environOf(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
  } catch {
    return [];
  }
}

/**
 * Processes that belong to one SWITCHBOARD_HOME wherever they hang now (an orphan is
 * re-parented to init): their command line names the home (nats-server's config, PostgreSQL's
 * data directory) or their environment carries it (every process npm start spawns inherits it).
 */
export function processesOfHome(home: string, exclude: ReadonlySet<number>): Array<Proc & { role: string }> {
  const out: Array<Proc & { role: string }> = [];
  for (const p of allProcs()) {
    if (exclude.has(p.pid) || p.pid === process.pid) continue;
    const byCmd = p.cmd.some((a) => a.includes(home));
    const byEnv = !byCmd && environOf(p.pid).includes(`SWITCHBOARD_HOME=${home}`);
    if (!byCmd && !byEnv) continue;
    const joined = p.cmd.join(' ');
    const role =
      roleOf(p) ??
      (joined.includes('reaper-main') ? 'reaper' : joined.includes('scripts/start.ts') ? 'start' : joined);
    out.push({ ...p, role: role.slice(0, 120) });
  }
  return out;
}
