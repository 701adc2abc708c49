import { spawn } from 'node:child_process';
import {
  collectLines,
  describeExit,
  exitStatus,
  forgetChild,
  REAPER_STAGE,
  type ServerIncarnation,
  spawnFailure,
  stopChild,
  watchChild,
} from '@switchboard/testkit/infra';
import { oneLine } from './failures.ts';
import { formatLogLine } from './log-format.ts';

/** One run of a supervised process (a service, or a server npm start runs): started and ready. */
export type Incarnation = ServerIncarnation;

export interface Supervised {
  readonly name: string;
  /** Stops the process for good: no restart after this. */
  stop(): Promise<void>;
}

const FIRST_DELAY_MS = 500;
const MAX_DELAY_MS = 30_000;
/** An incarnation that lasted this long was healthy: the next crash restarts quickly again. */
const STABLE_MS = 60_000;

/**
 * Keeps a process running. `launch` starts one incarnation and resolves once it is ready; when
 * it exits without being asked to, it is launched again after a delay that doubles from 0.5 s
 * up to 30 s. A failed relaunch is logged in one line (why, and when the next try comes) and
 * tried again, for as long as the supervisor runs. Only the first launch's failure is the
 * caller's to handle: that is a start-up failure.
 */
export async function supervise(
  name: string,
  launch: () => Promise<Incarnation>,
  say: (line: string) => void,
): Promise<Supervised> {
  let current: Incarnation | undefined = await launch();
  let stopping = false;
  let delay = FIRST_DELAY_MS;
  let retry: NodeJS.Timeout | undefined;
  let relaunching: Promise<void> | undefined;

  const schedule = () => {
    const wait = delay;
    delay = Math.min(delay * 2, MAX_DELAY_MS);
    retry = setTimeout(() => {
      retry = undefined;
      relaunching = relaunch().finally(() => {
        relaunching = undefined;
      });
    }, wait);
  };
  const relaunch = async () => {
    try {
      const next = await launch();
      if (stopping) return next.stop();
      current = next;
      say(`[${name}] running again`);
      watch(next);
    } catch (err) {
      if (stopping) return;
      say(`[${name}] could not come back: ${oneLine(err)} Trying again in ${delay} ms.`);
      schedule();
    }
  };
  const watch = (incarnation: Incarnation) => {
    const startedAt = Date.now();
    void incarnation.exited.then((status) => {
      if (current === incarnation) current = undefined;
      if (stopping) return;
      if (Date.now() - startedAt > STABLE_MS) delay = FIRST_DELAY_MS;
      say(`[${name}] exited (${describeExit(status)}); restarting in ${delay} ms`);
      schedule();
    });
  };
  watch(current);

  return {
    name,
    async stop() {
      stopping = true;
      clearTimeout(retry);
      await relaunching;
      await current?.stop();
      say(`[${name}] stopped`);
    },
  };
}

export interface ServiceSpec {
  name: string;
  entry: string;
  env: Record<string, string>;
  /** Options of the Node.js running it (before the entry point), as its deployment sets them. */
  nodeArgs?: string[];
}

/** Runs a service entry point as a child process with readable logs. */
export function launchService(spec: ServiceSpec, color: boolean): () => Promise<Incarnation> {
  return async () => {
    // Own process group: a Ctrl-C in the terminal reaches only the supervisor, which then
    // stops services in order. The IPC channel lets a service notice if the supervisor dies.
    const child = spawn(process.execPath, [...(spec.nodeArgs ?? []), spec.entry], {
      env: { ...process.env, ...spec.env },
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      detached: true,
    });
    const exited = exitStatus(child);
    const failed = spawnFailure(child, `the ${spec.name} service`);
    collectLines(child, (line) => process.stdout.write(`${formatLogLine(spec.name, line, color)}\n`));
    await Promise.race([new Promise((resolve) => child.once('spawn', resolve)), failed]);
    watchChild(child.pid, REAPER_STAGE.service);
    void exited.then(() => forgetChild(child.pid));
    return {
      pid: child.pid,
      exited,
      // The service drains its in-flight work on SIGTERM; SIGKILL only if that hangs.
      stop: () => stopChild(child, exited, 25_000),
    };
  };
}
