import { bootService, handleShutdown, type Telemetry } from '@switchboard/kit';
import { loadConfig } from './config.ts';
import type { ChatsDatabase } from './db.ts';
import { chatsMigrations } from './migrations/index.ts';
import { createChats } from './service.ts';

export async function runChats(telemetry: Telemetry): Promise<void> {
  const config = loadConfig();
  const { log, db, nc, bus } = await bootService<ChatsDatabase>({
    service: 'chats',
    config,
    migrations: chatsMigrations,
  });
  const chats = await createChats({ db, bus, log, config });
  await chats.start();

  handleShutdown(log, [
    ['chats', () => chats.stop()],
    ['nats', () => nc.drain()],
    ['database', () => db.destroy()],
    ['telemetry', () => telemetry.shutdown()],
  ]);
}
