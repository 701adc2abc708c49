import { startTelemetry } from '@switchboard/kit';

// Telemetry first: the HTTP server module must be loaded after instrumentation is installed.
const telemetry = startTelemetry('switchboard-sandbox');
const { runSandbox } = await import('./server.ts');
await runSandbox(telemetry);
