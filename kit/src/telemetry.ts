import { DiagConsoleLogger, DiagLogLevel, diag } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace';

export interface Telemetry {
  readonly exporting: boolean;
  shutdown(): Promise<void>;
}

/**
 * Starts OpenTelemetry for one service process. Must run before `http` is first loaded
 * (main.ts imports the rest of the service after this returns) so the HTTP server is
 * instrumented; undici is instrumented through diagnostics channels and has no such rule.
 *
 * The standard variables apply: OTEL_SERVICE_NAME overrides the name given here,
 * OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) turns on OTLP/HTTP
 * export, OTEL_EXPORTER_OTLP_HEADERS adds headers, OTEL_BSP_SCHEDULE_DELAY sets the batch interval,
 * OTEL_SDK_DISABLED=true turns everything off. Without an endpoint nothing is instrumented
 * either: no spans are made and no trace context is passed on (a process that exports nothing
 * has no trace to continue).
 */
export function startTelemetry(serviceName: string, env: NodeJS.ProcessEnv = process.env): Telemetry {
  if (env.OTEL_SDK_DISABLED?.toLowerCase() === 'true') {
    return { exporting: false, shutdown: async () => undefined };
  }
  if (env.OTEL_LOG_LEVEL?.toLowerCase() === 'debug')
    diag.setLogger(new DiagConsoleLogger(), DiagLogLevel.DEBUG);
  const exporting = Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
  // Spans nobody exports are pure cost on every request and message (a few per cent of the
  // gateway's CPU under bench:messaging): without an exporter nothing is instrumented.
  if (!exporting) return { exporting: false, shutdown: async () => undefined };
  const sdk = new NodeSDK({
    serviceName: env.OTEL_SERVICE_NAME || serviceName,
    spanProcessors: [
      new BatchSpanProcessor({
        exporter: new OTLPTraceExporter(),
        scheduledDelayMillis: Number(env.OTEL_BSP_SCHEDULE_DELAY ?? 5000),
      }),
    ],
    // Switchboard exports traces only. Left unset, the SDK builds OTLP metric and log exporters
    // from the environment's defaults, and shutting those down retried against nothing for
    // about 9 s on every stop.
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [
      new HttpInstrumentation({
        // Health probes run every few seconds and would drown the traces that matter.
        ignoreIncomingRequestHook: (req) => req.url?.startsWith('/api/v1/status/health') ?? false,
      }),
      new UndiciInstrumentation(),
    ],
  });
  sdk.start();
  return { exporting, shutdown: () => sdk.shutdown() };
}
