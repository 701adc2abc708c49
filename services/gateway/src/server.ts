import { runService, type Telemetry } from '@switchboard/kit';
import { loadConfig } from './config.ts';
import { gatewayMigrations } from './migrations/index.ts';
import { createGateway } from './service.ts';
import type { GatewayDatabase } from './store/db.ts';

export async function runGateway(telemetry: Telemetry): Promise<void> {
  const config = loadConfig();
  await runService<GatewayDatabase>({
    service: 'gateway',
    config,
    migrations: gatewayMigrations,
    telemetry,
    create: (booted) => createGateway({ ...booted, config }),
  });
}
