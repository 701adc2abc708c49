export { createObjectStoreStorage, mediaBucketName, mediaStreamName } from './adapters/object-store.ts';
export type { MediaStorage } from './adapters/storage.ts';
export { limitsFromConfig, loadConfig, type MediaConfig, MediaConfigSchema } from './config.ts';
export type { MediaDatabase } from './db.ts';
export { mediaMigrations } from './migrations/index.ts';
export { runMedia } from './server.ts';
export { createMedia, type Media } from './service.ts';
