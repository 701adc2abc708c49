import { bootService, handleShutdown, type Telemetry } from '@switchboard/kit';
import { loadConfig } from './config.ts';
import type { MediaDatabase } from './db.ts';
import { mediaMigrations } from './migrations/index.ts';
import { createMedia } from './service.ts';

export async function runMedia(telemetry: Telemetry): Promise<void> {
  const config = loadConfig();
  const { log, db, nc, bus } = await bootService<MediaDatabase>({
    service: 'media',
    config,
    migrations: mediaMigrations,
  });
  const media = await createMedia({ db, bus, nc, log, config });
  await media.start();

  handleShutdown(log, [
    ['media', () => media.stop()],
    ['nats', () => nc.drain()],
    ['database', () => db.destroy()],
    ['telemetry', () => telemetry.shutdown()],
  ]);
}
