/**
 * What the benches' floors share: their processes started one by one until each prints its ready
 * line, their streams configured as the inbox's, and deleted when they stop (also on a NATS given
 * by NATS_URL).
 */
import { jetstreamManager } from '@nats-io/jetstream';
import { connectNats } from '@switchboard/kit';
import { instanceId, type StreamKey, streamName } from '@switchboard/proto';
import { isNotFound, streamConfigs } from '@switchboard/proto/bus';
import { type ServiceProcess, spawnService, waitFor } from '@switchboard/testkit/tools';

/**
 * Starts `entry` once per environment, in order, each after the one before printed `readyLine`;
 * when one fails to start, those already started are stopped and the error names `what`.
 */
async function spawnUntilReady(
  entry: string,
  envs: ReadonlyArray<Record<string, string>>,
  readyLine: string,
  what: string,
): Promise<ServiceProcess[]> {
  const ready = (output: string) => output.split('\n').includes(readyLine);
  const started: ServiceProcess[] = [];
  try {
    for (const env of envs) {
      const p = spawnService(entry, env);
      started.push(p);
      const stopped = () => p.child.exitCode !== null || p.child.signalCode !== null;
      await waitFor(
        async () => ready(p.output()) || stopped(),
        30_000,
        () => `${what}: ${p.output()}`,
      );
      if (stopped()) throw new Error(`a process of ${what} stopped while starting: ${p.output()}`);
    }
    return started;
  } catch (err) {
    await Promise.all(started.map((p) => p.stop()));
    throw err;
  }
}

/**
 * An instance's `key` stream as configured (file storage, limits, duplicate window), under the
 * floor's own `name` and `subject`: for the floors' processes, which create their streams.
 */
export function floorStreamConfig(key: StreamKey, name: string, subject: string) {
  const like = instanceId('floor');
  const config = streamConfigs(like).find((c) => c.name === streamName(like, key));
  if (!config) throw new Error(`no configuration of the ${key} stream`);
  return { ...config, name, subjects: [subject] };
}

/** Deletes the named streams (with their durables); one that is already gone is no error. */
async function deleteStreams(natsUrl: string, names: readonly string[]): Promise<void> {
  if (names.length === 0) return;
  const nc = await connectNats(natsUrl, 'bench-floor-cleanup');
  try {
    const jsm = await jetstreamManager(nc);
    for (const name of names)
      await jsm.streams.delete(name).catch((err: unknown) => {
        if (!isNotFound(err)) throw err;
      });
  } finally {
    await nc.close();
  }
}

/** A floor's processes (in the order of their environments) and its one stop. */
export interface FloorProcesses {
  readonly processes: readonly ServiceProcess[];
  /** Stops the processes, then deletes the streams; once, whoever asks first (the scenario, or a failed run's clean-up). */
  stop(): Promise<void>;
}

/**
 * Starts a floor (`spawnUntilReady`) whose processes create `streams`: they are deleted when it
 * stops, and when it fails to start.
 */
export async function startFloor(opts: {
  entry: string;
  envs: ReadonlyArray<Record<string, string>>;
  readyLine: string;
  what: string;
  natsUrl: string;
  streams: readonly string[];
}): Promise<FloorProcesses> {
  const processes = await spawnUntilReady(opts.entry, opts.envs, opts.readyLine, opts.what).catch(
    async (err: unknown) => {
      await deleteStreams(opts.natsUrl, opts.streams);
      throw err;
    },
  );
  let stopping: Promise<void> | undefined;
  return {
    processes,
    stop: () =>
      (stopping ??= (async () => {
        await Promise.all(processes.map((p) => p.stop()));
        await deleteStreams(opts.natsUrl, opts.streams);
      })()),
  };
}
