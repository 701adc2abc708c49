import { type ChatsDatabase, chatsMigrations, createChats } from '@switchboard/chats';
import {
  createFanout,
  createFanoutMigrations,
  createWebhookSecretsBox,
  type FanoutDatabase,
  settingsFromConfig,
} from '@switchboard/fanout';
import { createGateway, type GatewayDatabase, gatewayMigrations } from '@switchboard/gateway';
import {
  bootService,
  connectBus,
  createLogger,
  handleShutdown,
  pingDb,
  pingNats,
  type Telemetry,
} from '@switchboard/kit';
import { createMedia, type MediaDatabase, mediaMigrations } from '@switchboard/media';
import type { Kysely } from 'kysely';
import { loadConfig } from './config.ts';

/**
 * Gateway, chats, fanout and media of one instance in one process: one parse of the environment, one
 * logger (each service logs on a child with `service` set), one NATS connection and bus, one
 * PostgreSQL pool per service (each applies its own migrations, as its own process would), the
 * services built by their own composition roots, and one ordered shutdown.
 */
export async function runInbox(telemetry: Telemetry): Promise<void> {
  const config = loadConfig();
  // The three configurations share DATABASE_URL, NATS_URL, INSTANCE_ID and LOG_LEVEL.
  const base = config.chats;
  const log = createLogger('inbox', base.LOG_LEVEL);
  const shared = { log, ...(await connectBus({ name: 'inbox', config: base, log })) };
  const { nc, bus } = shared;

  const g = await bootService<GatewayDatabase>({
    service: 'gateway',
    config: config.gateway,
    migrations: gatewayMigrations,
    shared,
  });
  const c = await bootService<ChatsDatabase>({
    service: 'chats',
    config: config.chats,
    migrations: chatsMigrations,
    shared,
  });
  const box = createWebhookSecretsBox(config.fanout.INBOX_SECRET_KEY);
  const f = await bootService<FanoutDatabase>({
    service: 'fanout',
    config: config.fanout,
    migrations: createFanoutMigrations(box),
    shared,
  });
  const m = await bootService<MediaDatabase>({
    service: 'media',
    config: config.media,
    migrations: mediaMigrations,
    shared,
  });
  const pools = [g.db, c.db, f.db, m.db].map((db) => db as unknown as Kysely<unknown>);

  // The media service listens on its own loopback port; the gateway passes `media/` there.
  const media = await createMedia({ db: m.db, bus, nc, log: m.log, config: config.media });
  const { url: mediaUrl } = await media.start();
  const gateway = await createGateway({
    db: g.db,
    bus,
    log: g.log,
    config: { ...config.gateway, MEDIA_URL: mediaUrl },
    // The process is healthy when every service's pool and the one NATS connection answer.
    health: {
      database: async () => (await Promise.all(pools.map((db) => pingDb(db)))).every(Boolean),
      nats: () => pingNats(nc),
    },
  });
  const chats = await createChats({ db: c.db, bus, log: c.log, config: config.chats });
  const fanout = await createFanout({
    db: f.db,
    bus,
    nc,
    log: f.log,
    settings: settingsFromConfig(config.fanout),
    box,
  });

  // The HTTP API last: when it answers, every service behind it is consuming and serving.
  await chats.start();
  await fanout.start();
  await gateway.start();
  log.info(
    { instance: base.INSTANCE_ID, url: config.gateway.PUBLIC_URL, webhooks: fanout.stats().webhooks },
    'inbox running: gateway, chats, fanout and media in one process',
  );

  handleShutdown(log, [
    // Intake first: no new HTTP requests, those in flight finish (their requests to chats and
    // fanout are still answered).
    ['gateway http', () => gateway.app.close()],
    ['chats', () => chats.stop()],
    // The gateway still answers the fan-out's owner lookups while its deliveries finish.
    ['fanout', () => fanout.stop()],
    ['media', () => media.stop()],
    ['gateway', () => gateway.stop()],
    ['nats', () => nc.drain()],
    ['database', () => Promise.all(pools.map((db) => db.destroy()))],
    ['telemetry', () => telemetry.shutdown()],
  ]);
}
