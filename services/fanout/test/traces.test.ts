import { context, propagation, SpanKind, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { type Receiver, startReceiver, waitFor } from '@switchboard/testkit';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Harness, publishEvent, startHarness } from './helpers.ts';

// What startTelemetry sets up in a service process, with spans kept in memory.
const exporter = new InMemorySpanExporter();
const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
let unregister: () => void = () => undefined;

let h: Harness;
let r: Receiver;

beforeAll(async () => {
  trace.setGlobalTracerProvider(provider);
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  unregister = registerInstrumentations({
    instrumentations: [new UndiciInstrumentation()],
    tracerProvider: provider,
  });
  h = await startHarness();
  r = await startReceiver();
});
afterAll(async () => {
  await h.stop();
  await r.close();
  unregister();
  await provider.shutdown();
});

it('continues the trace of the network webhook through the delivery attempt', async () => {
  await h.createWebhook(r.url);
  const tracer = trace.getTracer('test');
  // Stands in for the gateway's span of the network's webhook POST.
  const { traceId, event } = await tracer.startActiveSpan('POST /api/v1/waba/webhook/', async (span) => {
    const published = await publishEvent(h.bus);
    span.end();
    return { traceId: span.spanContext().traceId, event: published };
  });
  await waitFor(async () => r.forEvent(event.event_id).length === 1, 10_000, 'delivery');
  const [got] = r.forEvent(event.event_id);
  // The receiver sees the same trace in the W3C header undici adds.
  expect(String(got?.headers.traceparent)).toContain(traceId);

  await waitFor(
    async () =>
      exporter
        .getFinishedSpans()
        // The delivery's CONSUMER span; the owner's rights lookup adds request/reply spans
        // (`process <subject>` too) to the same trace.
        .some(
          (s) =>
            s.kind === SpanKind.CONSUMER &&
            s.name.startsWith('process ') &&
            s.spanContext().traceId === traceId,
        ),
    5_000,
    'consumer span',
  );
  const spans = exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
  const consumer = spans.find((s) => s.kind === SpanKind.CONSUMER && s.name.startsWith('process '));
  const client = spans.find((s) => s.kind === SpanKind.CLIENT && s.name.startsWith('POST'));
  expect(consumer?.attributes['switchboard.webhook.attempt']).toBe(1);
  expect(client?.parentSpanContext?.spanId).toBe(consumer?.spanContext().spanId);
});
