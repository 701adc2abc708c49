#!/usr/bin/env -S node --expose-gc
// Only the telemetry module: importing the kit index would load http before it is instrumented.
import { startTelemetry } from '@switchboard/kit/telemetry';

// Telemetry first: gateway, chats and fanout load http and undici, which must be instrumented.
const telemetry = startTelemetry('switchboard-inbox');
const { runInbox } = await import('./server.ts');
await runInbox(telemetry);
