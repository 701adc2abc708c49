import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Arrival of one delivery: which event, and when (performance.timeOrigin-based ms). */
export interface Arrival {
  readonly eventId: string;
  readonly at: number;
}

export interface BenchReceiver {
  readonly url: string;
  readonly arrivals: Arrival[];
  reset(): void;
  close(): Promise<void>;
}

const EVENT_ID = /"id":"(ev-[^"]+)"/;

/**
 * A webhook endpoint answering 200 after `delayMs`. It records the event id found in the body
 * (the first `"id":"ev-…"`), so fan-out deliveries and raw posts are measured the same way.
 */
export async function startBenchReceiver(delayMs = 0): Promise<BenchReceiver> {
  const arrivals: Arrival[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = performance.now();
      const id = EVENT_ID.exec(Buffer.concat(chunks).toString('utf8'))?.[1];
      if (id) arrivals.push({ eventId: id, at });
      const answer = () => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('ok');
      };
      if (delayMs > 0) setTimeout(answer, delayMs);
      else answer();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    arrivals,
    reset: () => {
      arrivals.length = 0;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A URL nothing listens on: every connection is refused. */
export async function deadUrl(): Promise<string> {
  const r = await startBenchReceiver();
  const url = r.url;
  await r.close();
  return url;
}
