// Only the telemetry module: importing the kit index would load http before it is instrumented.
import { startTelemetry } from '@switchboard/kit/telemetry';

// Telemetry first: the HTTP modules must be loaded after instrumentation is installed.
const telemetry = startTelemetry('switchboard-provisioner');
const { runProvisioner } = await import('./server.ts');
await runProvisioner(telemetry);
