import { bootService, handleShutdown, pingDb, pingNats, type Telemetry } from '@switchboard/kit';
import { ensureConfigurator as ensureConfiguratorRpc, principalLookup } from '@switchboard/proto';
import { buildApp } from './app.ts';
import { loadConfig } from './config.ts';
import { ensureAdmin, ensureConfigurator } from './identity/bootstrap.ts';
import type { GatewayDatabase } from './identity/db.ts';
import { createMailer } from './identity/mailer.ts';
import { gatewayMigrations } from './migrations/index.ts';

export async function runGateway(telemetry: Telemetry): Promise<void> {
  const config = loadConfig();
  const { log, db, nc, bus } = await bootService<GatewayDatabase>({
    service: 'gateway',
    config,
    migrations: gatewayMigrations,
  });
  const mailer = createMailer(config.SMTP_URL, config.MAIL_FROM, log);

  const { app, users, tokens } = await buildApp({
    log,
    bus,
    db,
    config,
    mailer,
    health: { database: () => pingDb(db), nats: () => pingNats(nc) },
  });
  await ensureAdmin(
    db,
    users,
    {
      adminUsername: config.INBOX_ADMIN_USERNAME,
      adminEmail: config.INBOX_ADMIN_EMAIL,
      adminPassword: config.INBOX_ADMIN_PASSWORD,
    },
    log,
  );
  if (config.INBOX_CONFIGURATOR_USERNAME)
    await ensureConfigurator(db, tokens, config.INBOX_CONFIGURATOR_USERNAME);
  const configuratorRpc = bus.serve(ensureConfiguratorRpc, ({ username }) =>
    ensureConfigurator(db, tokens, username),
  );
  const principalRpc = bus.serve(principalLookup, async ({ user_id }) => ({
    principal: await users.principalFor(user_id),
  }));
  await app.listen({ host: config.HOST, port: config.PORT });

  handleShutdown(log, [
    ['http', () => app.close()],
    [
      'rpc',
      async () => {
        configuratorRpc.unsubscribe();
        principalRpc.unsubscribe();
      },
    ],
    ['nats', () => nc.drain()],
    ['mailer', async () => mailer.close()],
    ['database', () => db.destroy()],
    ['telemetry', () => telemetry.shutdown()],
  ]);
}
