/**
 * A loopback OTLP/HTTP endpoint for benches that measure the services with their traces
 * exported: it accepts every export at once and keeps only counts, so what the figures show
 * is the exporting services' cost, not a collector's work in the bench's own process.
 */
import { createServer } from 'node:http';

export interface OtlpSink {
  /** Base URL for OTEL_EXPORTER_OTLP_ENDPOINT. */
  readonly endpoint: string;
  /** Trace exports received so far, and their bytes. */
  counts(): { exports: number; bytes: number };
  close(): Promise<void>;
}

export async function startOtlpSink(): Promise<OtlpSink> {
  let exports = 0;
  let bytes = 0;
  const server = createServer((req, res) => {
    req.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
    });
    req.on('end', () => {
      if (req.url === '/v1/traces') exports++;
      res.writeHead(req.url === '/v1/traces' ? 200 : 404, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const addr = server.address();
  if (!addr || typeof addr === 'string') throw new Error('OTLP sink has no port');
  return {
    endpoint: `http://127.0.0.1:${addr.port}`,
    counts: () => ({ exports, bytes }),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
