export * from './local.ts';
export * from './nats-server.ts';
export * from './ports.ts';
export * from './postgres.ts';
export * from './process.ts';
export * from './reaper.ts';
export * from './smtp-sink.ts';
