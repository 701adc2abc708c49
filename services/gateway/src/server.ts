import {
  connectNats,
  createDb,
  createLogger,
  handleShutdown,
  pingDb,
  pingNats,
  type Telemetry,
} from '@switchboard/kit';
import { createBus } from '@switchboard/proto';
import { buildApp } from './app.ts';
import { loadConfig } from './config.ts';

export async function runGateway(telemetry: Telemetry): Promise<void> {
  const config = loadConfig();
  const log = createLogger('gateway', config.LOG_LEVEL);
  const db = createDb({ url: config.DATABASE_URL, applicationName: 'switchboard-gateway' });
  const nc = await connectNats(config.NATS_URL, `gateway/${config.INSTANCE_ID}`);
  const bus = await createBus(nc, config.INSTANCE_ID);
  await bus.ensureStreams();

  const app = await buildApp({
    log,
    bus,
    health: { database: () => pingDb(db), nats: () => pingNats(nc) },
    waba: { secret: config.WABA_WEBHOOK_SECRET, verifyToken: config.WABA_VERIFY_TOKEN },
  });
  await app.listen({ host: config.HOST, port: config.PORT });

  handleShutdown(log, [
    ['http', () => app.close()],
    ['nats', () => nc.drain()],
    ['database', () => db.destroy()],
    ['telemetry', () => telemetry.shutdown()],
  ]);
}
