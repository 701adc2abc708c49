// Only the telemetry module: importing the kit index would load http before it is instrumented.
import { startTelemetry } from '@switchboard/kit/telemetry';

const telemetry = startTelemetry('switchboard-chats');
const { runChats } = await import('./server.ts');
await runChats(telemetry);
