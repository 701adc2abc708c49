export { type FanoutConfig, FanoutConfigSchema, loadConfig, settingsFromConfig } from './config.ts';
export type { FanoutDatabase } from './db.ts';
export { createFanoutMigrations, fanoutMigrations } from './migrations/index.ts';
export { createWebhookSecretsBox } from './sealing.ts';
export { runFanout } from './server.ts';
export { createFanout, type Fanout } from './service.ts';
export { defaultSettings, type FanoutSettings } from './settings.ts';
