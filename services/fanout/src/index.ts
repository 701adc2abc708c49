export { type FanoutConfig, FanoutConfigSchema, loadConfig, settingsFromConfig } from './config.ts';
export type { FanoutDatabase } from './db.ts';
export { fanoutMigrations } from './migrations/index.ts';
export { runFanout } from './server.ts';
export { createFanout, type Fanout } from './service.ts';
export { defaultSettings, type FanoutSettings } from './settings.ts';
