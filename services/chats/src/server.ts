import {
  connectNats,
  createDb,
  createLogger,
  handleShutdown,
  migrate,
  type Telemetry,
} from '@switchboard/kit';
import { createBus } from '@switchboard/proto';
import { startAuditLog } from './audit-log.ts';
import { loadConfig } from './config.ts';
import type { ChatsDatabase } from './db.ts';
import { startInboundConsumer } from './inbound.ts';
import { chatsMigrations } from './migrations/index.ts';

export async function runChats(telemetry: Telemetry): Promise<void> {
  const config = loadConfig();
  const log = createLogger('chats', config.LOG_LEVEL);
  const db = createDb<ChatsDatabase>({ url: config.DATABASE_URL, applicationName: 'switchboard-chats' });
  const applied = await migrate(db, 'chats', chatsMigrations);
  if (applied.length) log.info({ applied }, 'migrations applied');
  const nc = await connectNats(config.NATS_URL, `chats/${config.INSTANCE_ID}`);
  const bus = await createBus(nc, config.INSTANCE_ID);
  await bus.ensureStreams();
  const inbound = await startInboundConsumer({ bus, db, log });
  const audit = await startAuditLog({ bus, db, log });
  log.info({ instance: config.INSTANCE_ID }, 'chats worker consuming');

  handleShutdown(log, [
    ['request handlers', async () => audit.rpc.unsubscribe()],
    ['inbound consumer', () => inbound.stop()],
    ['event-log consumer', () => audit.consumption.stop()],
    ['nats', () => nc.drain()],
    ['database', () => db.destroy()],
    ['telemetry', () => telemetry.shutdown()],
  ]);
}
