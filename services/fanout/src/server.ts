import {
  bootService,
  createHttpServer,
  handleShutdown,
  pingDb,
  pingNats,
  type Telemetry,
} from '@switchboard/kit';
import { createWebhookSecretsBox } from './adapters/sealing.ts';
import { loadConfig, settingsFromConfig } from './config.ts';
import type { FanoutDatabase } from './db.ts';
import { createFanoutMigrations } from './migrations/index.ts';
import { createFanout } from './service.ts';

export async function runFanout(telemetry: Telemetry): Promise<void> {
  const config = loadConfig();
  const settings = settingsFromConfig(config);
  const box = createWebhookSecretsBox(config.INBOX_SECRET_KEY);
  const { log, db, nc, bus } = await bootService<FanoutDatabase>({
    service: 'fanout',
    config,
    migrations: createFanoutMigrations(box),
  });
  const fanout = await createFanout({ db, bus, nc, log, settings, box });
  await fanout.start();
  log.info(
    { instance: config.INSTANCE_ID, webhooks: fanout.supervisor.running().length },
    'fanout delivering',
  );

  const health = config.HEALTH_PORT === undefined ? undefined : createHttpServer({ logger: log });
  if (health && config.HEALTH_PORT !== undefined) {
    health.get('/healthz', async (_req, reply) => {
      const [database, nats] = await Promise.all([pingDb(db), pingNats(nc)]);
      return reply.status(database && nats ? 200 : 503).send({ database, nats });
    });
    await health.listen({ host: '0.0.0.0', port: config.HEALTH_PORT });
  }

  handleShutdown(log, [
    ['health', async () => health?.close()],
    ['fanout', () => fanout.stop()],
    ['nats', () => nc.drain()],
    ['database', () => db.destroy()],
    ['telemetry', () => telemetry.shutdown()],
  ]);
}
