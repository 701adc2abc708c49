/**
 * The hop floor: what a request costs on this machine when it crosses the same processes as a
 * send (client → front → nats-server → responder → PostgreSQL, one committed insert, and back)
 * with no work in between (`hop-floor-process.ts`). A send cannot answer sooner than this without
 * removing a hop; the raw baseline (one process answering) does not say that.
 */
import { join } from 'node:path';
import { freePort, repoRoot } from '@switchboard/testkit/tools';
import { startFloor } from '../floor-processes.ts';

export interface HopFloor {
  /** Base URL of the front; `POST /floor` answers 202 once the responder's insert committed. */
  readonly url: string;
  readonly path: '/floor';
  stop(): Promise<void>;
}

export async function startHopFloor(opts: { natsUrl: string; databaseUrl: string }): Promise<HopFloor> {
  const entry = join(repoRoot, 'bench/messaging/hop-floor-process.ts');
  const subject = `bench.hop-floor.${process.pid}.${Date.now()}`;
  const port = await freePort();
  const common = { NATS_URL: opts.natsUrl, HOP_FLOOR_SUBJECT: subject };
  const { stop } = await startFloor({
    entry,
    envs: [
      { ...common, HOP_FLOOR_ROLE: 'responder', DATABASE_URL: opts.databaseUrl },
      { ...common, HOP_FLOOR_ROLE: 'front', PORT: String(port) },
    ],
    readyLine: 'hop-floor ready',
    what: 'the hop floor',
    natsUrl: opts.natsUrl,
    // Core NATS request/reply only: no stream of its own.
    streams: [],
  });
  return { url: `http://127.0.0.1:${port}`, path: '/floor', stop };
}
