import { startTelemetry } from '@switchboard/kit';

// Telemetry first: the HTTP server module must be loaded after instrumentation is installed.
const telemetry = startTelemetry('switchboard-gateway');
const { runGateway } = await import('./server.ts');
await runGateway(telemetry);
