export { createWebhookSecretsBox } from './adapters/sealing.ts';
export { type FanoutConfig, FanoutConfigSchema, loadConfig, settingsFromConfig } from './config.ts';
export type { FanoutDatabase } from './db.ts';
export { defaultSettings, type FanoutSettings } from './domain/settings.ts';
export { createFanoutMigrations, fanoutMigrations } from './migrations/index.ts';
export { runFanout } from './server.ts';
export { createFanout, type Fanout } from './service.ts';
export { type AckBatcher, createAckBatcher } from './workers/ack-batcher.ts';
export { startConsumerLoop } from './workers/consumer-loop.ts';
