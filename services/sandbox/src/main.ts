// Only the telemetry module: importing the kit index would load http before it is instrumented.
import { startTelemetry } from '@switchboard/kit/telemetry';

// Telemetry first: the HTTP server module must be loaded after instrumentation is installed.
const telemetry = startTelemetry('switchboard-sandbox');
const { runSandbox } = await import('./server.ts');
await runSandbox(telemetry);
