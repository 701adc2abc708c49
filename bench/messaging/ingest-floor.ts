/**
 * The ingest floor: what an inbound webhook costs on this machine when it crosses the same
 * processes as the inbox's (client → front → nats-server → folder → PostgreSQL, one statement per
 * batch, an event published to JetStream per body, and the acknowledgements) with no work in
 * between (`ingest-floor-process.ts`). The raw baseline says what one process answering costs;
 * this says what the inbox's hand-overs cost, so the ingest's distance from it is work.
 */
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connectNats } from '@switchboard/kit';
import { freePort, repoRoot, type ServiceProcess, spawnService, waitFor } from '@switchboard/testkit/tools';

export interface IngestFloor {
  /** Base URL of the front; `POST /floor` answers 200 once the body is in the floor's stream. */
  readonly url: string;
  readonly path: '/floor';
  /** Where the folder publishes each body's event (`{event_id, body}`) after its statement. */
  readonly eventSubject: string;
  /** The floor's processes, for their CPU time. */
  readonly pids: { floor_front: number | undefined; floor_folder: number | undefined };
  stop(): Promise<void>;
}

async function ready(p: ServiceProcess): Promise<void> {
  const stopped = () => p.child.exitCode !== null || p.child.signalCode !== null;
  await waitFor(
    async () => /^ingest-floor ready$/m.test(p.output()) || stopped(),
    30_000,
    () => `the ingest floor: ${p.output()}`,
  );
  if (stopped()) throw new Error(`an ingest floor process stopped while starting: ${p.output()}`);
}

export async function startIngestFloor(opts: { natsUrl: string; databaseUrl: string }): Promise<IngestFloor> {
  const entry = join(repoRoot, 'bench/messaging/ingest-floor-process.ts');
  const tag = `p${process.pid}t${Date.now()}`;
  const prefix = `bench.ingest_floor.${tag}`;
  const streams = [`bench_ingest_floor_${tag}_inbound`, `bench_ingest_floor_${tag}_events`];
  const port = await freePort();
  const common = {
    NATS_URL: opts.natsUrl,
    INGEST_FLOOR_PREFIX: prefix,
    INGEST_FLOOR_STREAMS: JSON.stringify(streams),
  };
  const processes: ServiceProcess[] = [];
  const stop = async () => {
    await Promise.all(processes.map((p) => p.stop()));
    // The streams (and their durable) go with the floor, also on a NATS given by NATS_URL.
    const nc = await connectNats(opts.natsUrl, 'ingest-floor-cleanup');
    try {
      const jsm = await jetstreamManager(nc);
      for (const name of streams) await jsm.streams.delete(name).catch(() => false);
    } finally {
      await nc.close();
    }
  };
  try {
    // The folder first: it creates the streams the front publishes to.
    const folder = spawnService(entry, {
      ...common,
      INGEST_FLOOR_ROLE: 'folder',
      DATABASE_URL: opts.databaseUrl,
    });
    processes.push(folder);
    await ready(folder);
    const front = spawnService(entry, { ...common, INGEST_FLOOR_ROLE: 'front', PORT: String(port) });
    processes.push(front);
    await ready(front);
    return {
      url: `http://127.0.0.1:${port}`,
      path: '/floor',
      eventSubject: `${prefix}.events`,
      pids: { floor_front: front.child.pid, floor_folder: folder.child.pid },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
