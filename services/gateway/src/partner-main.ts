// The gateway in partner mode (`/v1/`). Only the telemetry module first: importing the kit
// index would load http before it is instrumented.
import { startTelemetry } from '@switchboard/kit/telemetry';

const telemetry = startTelemetry('switchboard-partner-gateway');
const { runPartnerGateway } = await import('./partner/server.ts');
await runPartnerGateway(telemetry);
