/**
 * Starts the fan-out floor (`floor-process.ts`) as its own process, as the fan-out runs: one
 * durable per receiver on a stream of its own, so its rounds never reach the fan-out's durables.
 */
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connectNats } from '@switchboard/kit';
import { repoRoot, type ServiceProcess, spawnService, waitFor } from '@switchboard/testkit/tools';

export interface FanoutFloor {
  /** Where events for the floor are published (`{ body }`, as a network event carries it). */
  readonly subject: string;
  readonly pid: number | undefined;
  stop(): Promise<void>;
}

export async function startFanoutFloor(opts: {
  natsUrl: string;
  urls: readonly string[];
  concurrency: number;
}): Promise<FanoutFloor> {
  const tag = `p${process.pid}t${Date.now()}`;
  const subject = `bench.fanout_floor.${tag}.events`;
  const stream = `bench_fanout_floor_${tag}`;
  const p: ServiceProcess = spawnService(join(repoRoot, 'bench/fanout/floor-process.ts'), {
    NATS_URL: opts.natsUrl,
    FLOOR_STREAM: stream,
    FLOOR_SUBJECT: subject,
    FLOOR_URLS: JSON.stringify(opts.urls),
    FLOOR_CONCURRENCY: String(opts.concurrency),
  });
  const stopped = () => p.child.exitCode !== null || p.child.signalCode !== null;
  const stop = async () => {
    await p.stop();
    // The stream (and its durables) go with the floor, also on a NATS given by NATS_URL.
    const nc = await connectNats(opts.natsUrl, 'fanout-floor-cleanup');
    try {
      await (await jetstreamManager(nc)).streams.delete(stream).catch(() => false);
    } finally {
      await nc.close();
    }
  };
  try {
    await waitFor(
      async () => /^fanout-floor ready$/m.test(p.output()) || stopped(),
      30_000,
      () => `the fan-out floor: ${p.output()}`,
    );
    if (stopped()) throw new Error(`the fan-out floor stopped while starting: ${p.output()}`);
  } catch (err) {
    await stop();
    throw err;
  }
  return { subject, pid: p.child.pid, stop };
}
