import { runService, type Telemetry } from '@switchboard/kit';
import { loadConfig } from './config.ts';
import type { ChatsDatabase } from './db.ts';
import { chatsMigrations } from './migrations/index.ts';
import { createChats } from './service.ts';

export async function runChats(telemetry: Telemetry): Promise<void> {
  const config = loadConfig();
  await runService<ChatsDatabase>({
    service: 'chats',
    config,
    migrations: chatsMigrations,
    telemetry,
    create: (booted) => createChats({ ...booted, config }),
  });
}
