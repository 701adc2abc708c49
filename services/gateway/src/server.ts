import { bootService, handleShutdown, type Telemetry } from '@switchboard/kit';
import { loadConfig } from './config.ts';
import { gatewayMigrations } from './migrations/index.ts';
import { createGateway } from './service.ts';
import type { GatewayDatabase } from './store/db.ts';

export async function runGateway(telemetry: Telemetry): Promise<void> {
  const config = loadConfig();
  const { log, db, nc, bus } = await bootService<GatewayDatabase>({
    service: 'gateway',
    config,
    migrations: gatewayMigrations,
  });
  const gateway = await createGateway({ db, bus, log, config });
  await gateway.start();

  handleShutdown(log, [
    ['gateway', () => gateway.stop()],
    ['nats', () => nc.drain()],
    ['database', () => db.destroy()],
    ['telemetry', () => telemetry.shutdown()],
  ]);
}
