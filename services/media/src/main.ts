// Only the telemetry module: importing the kit index would load http before it is instrumented.
import { startTelemetry } from '@switchboard/kit/telemetry';

// Telemetry first, so undici and http are instrumented before anything loads them.
const telemetry = startTelemetry('switchboard-media');
const { runMedia } = await import('./server.ts');
await runMedia(telemetry);
