import { runService, type Telemetry } from '@switchboard/kit';
import { loadConfig } from './config.ts';
import { provisionerMigrations } from './migrations/index.ts';
import { createProvisioner } from './service.ts';
import type { ProvisionerDatabase } from './store/db.ts';

export async function runProvisioner(telemetry: Telemetry): Promise<void> {
  const config = loadConfig();
  // The provisioner's bus is the partner scope (config.INSTANCE_ID): its streams, its requests.
  await runService<ProvisionerDatabase>({
    service: 'provisioner',
    config,
    migrations: provisionerMigrations,
    telemetry,
    create: (booted) => createProvisioner({ ...booted, config }),
  });
}
