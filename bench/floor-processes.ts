/**
 * What the benches' floors share: their processes started one by one until each prints its ready
 * line, and their streams deleted when they stop (also on a NATS given by NATS_URL).
 */
import { jetstreamManager } from '@nats-io/jetstream';
import { connectNats } from '@switchboard/kit';
import { type ServiceProcess, spawnService, waitFor } from '@switchboard/testkit/tools';

/**
 * Starts `entry` once per environment, in order, each after the one before printed `readyLine`;
 * when one fails to start, those already started are stopped and the error names `what`.
 */
export async function spawnUntilReady(
  entry: string,
  envs: ReadonlyArray<Record<string, string>>,
  readyLine: string,
  what: string,
): Promise<ServiceProcess[]> {
  const ready = new RegExp(`^${readyLine}$`, 'm');
  const started: ServiceProcess[] = [];
  try {
    for (const env of envs) {
      const p = spawnService(entry, env);
      started.push(p);
      const stopped = () => p.child.exitCode !== null || p.child.signalCode !== null;
      await waitFor(
        async () => ready.test(p.output()) || stopped(),
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

/** Deletes the named streams (with their durables); one that is already gone is no error. */
export async function deleteStreams(natsUrl: string, names: readonly string[]): Promise<void> {
  const nc = await connectNats(natsUrl, 'bench-floor-cleanup');
  try {
    const jsm = await jetstreamManager(nc);
    for (const name of names) await jsm.streams.delete(name).catch(() => false);
  } finally {
    await nc.close();
  }
}
