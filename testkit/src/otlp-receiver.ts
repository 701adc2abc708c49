import { createServer, type Server } from 'node:http';
import { z } from 'zod';

const AnyValue = z.object({
  stringValue: z.string().optional(),
  intValue: z.union([z.string(), z.number()]).optional(),
});
const SpanJson = z.object({
  traceId: z.string(),
  spanId: z.string(),
  parentSpanId: z.string().optional(),
  name: z.string(),
  kind: z.number().optional(),
  startTimeUnixNano: z.union([z.string(), z.number()]).optional(),
  endTimeUnixNano: z.union([z.string(), z.number()]).optional(),
  attributes: z.array(z.object({ key: z.string(), value: AnyValue })).optional(),
});
const ExportRequest = z.object({
  resourceSpans: z.array(
    z.object({
      resource: z.object({ attributes: z.array(z.object({ key: z.string(), value: AnyValue })) }).optional(),
      scopeSpans: z.array(z.object({ spans: z.array(SpanJson).optional() })),
    }),
  ),
});

export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  kind: number | undefined;
  /** Epoch milliseconds (fractional), when the exporter sent them. */
  startMs: number | undefined;
  endMs: number | undefined;
  attributes: Record<string, string | number | undefined>;
}

const nanosToMs = (v: string | number | undefined) =>
  v === undefined ? undefined : Number(BigInt(v) / 1000n) / 1000;

export interface OtlpReceiver {
  /** Base URL for OTEL_EXPORTER_OTLP_ENDPOINT. */
  readonly endpoint: string;
  readonly spans: ReceivedSpan[];
  close(): Promise<void>;
}

/** A real OTLP/HTTP (JSON) trace receiver on loopback: what a collector would see. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.url !== '/v1/traces' || !req.headers['content-type']?.includes('json')) {
        res.writeHead(415).end();
        return;
      }
      const parsed = ExportRequest.safeParse(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      if (!parsed.success) {
        res.writeHead(400).end();
        return;
      }
      for (const rs of parsed.data.resourceSpans) {
        const service =
          rs.resource?.attributes.find((a) => a.key === 'service.name')?.value.stringValue ?? '';
        for (const ss of rs.scopeSpans) {
          for (const s of ss.spans ?? []) {
            spans.push({
              service,
              traceId: s.traceId,
              spanId: s.spanId,
              parentSpanId: s.parentSpanId || undefined,
              name: s.name,
              kind: s.kind,
              startMs: nanosToMs(s.startTimeUnixNano),
              endMs: nanosToMs(s.endTimeUnixNano),
              attributes: Object.fromEntries(
                (s.attributes ?? []).map((a) => [a.key, a.value.stringValue ?? a.value.intValue]),
              ),
            });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const addr = server.address();
  if (!addr || typeof addr === 'string') throw new Error('receiver has no port');
  return {
    endpoint: `http://127.0.0.1:${addr.port}`,
    spans,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
