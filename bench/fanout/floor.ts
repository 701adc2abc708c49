/**
 * Starts the fan-out floor (`floor-process.ts`) as its own process, as the fan-out runs: one
 * durable per receiver on a stream of its own, so its rounds never reach the fan-out's durables.
 */
import { join } from 'node:path';
import { repoRoot } from '@switchboard/testkit/tools';
import { startFloor } from '../floor-processes.ts';

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
  const floor = await startFloor({
    entry: join(repoRoot, 'bench/fanout/floor-process.ts'),
    envs: [
      {
        NATS_URL: opts.natsUrl,
        FLOOR_STREAM: stream,
        FLOOR_SUBJECT: subject,
        FLOOR_URLS: JSON.stringify(opts.urls),
        FLOOR_CONCURRENCY: String(opts.concurrency),
      },
    ],
    readyLine: 'fanout-floor ready',
    what: 'the fan-out floor',
    natsUrl: opts.natsUrl,
    streams: [stream],
  });
  return { subject, pid: floor.processes[0]?.child.pid, stop: floor.stop };
}
