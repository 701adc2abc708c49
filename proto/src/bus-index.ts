// `@switchboard/proto/bus`: the NATS side (the typed bus, trace context in headers, the
// outbox publisher, the streams' configurations). Depends on NATS and OpenTelemetry.
export * from './bus.ts';
export * from './outbox.ts';
export * from './stream-configs.ts';
export * from './trace.ts';
