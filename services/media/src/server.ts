import { runService, type Telemetry } from '@switchboard/kit';
import { loadConfig } from './config.ts';
import type { MediaDatabase } from './db.ts';
import { mediaMigrations } from './migrations/index.ts';
import { createMedia } from './service.ts';

export async function runMedia(telemetry: Telemetry): Promise<void> {
  const config = loadConfig();
  await runService<MediaDatabase>({
    service: 'media',
    config,
    migrations: mediaMigrations,
    telemetry,
    create: (booted) => createMedia({ ...booted, config }),
  });
}
