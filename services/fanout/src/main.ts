import { startTelemetry } from '@switchboard/kit';

// Telemetry first, so undici and http are instrumented before anything loads them.
const telemetry = startTelemetry('switchboard-fanout');
const { runFanout } = await import('./server.ts');
await runFanout(telemetry);
