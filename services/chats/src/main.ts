import { startTelemetry } from '@switchboard/kit';

const telemetry = startTelemetry('switchboard-chats');
const { runChats } = await import('./server.ts');
await runChats(telemetry);
