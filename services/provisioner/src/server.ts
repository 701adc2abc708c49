import { bootService, handleShutdown, type Telemetry } from '@switchboard/kit';
import { loadConfig } from './config.ts';
import { provisionerMigrations } from './migrations/index.ts';
import { createProvisioner } from './service.ts';
import type { ProvisionerDatabase } from './store/db.ts';

export async function runProvisioner(telemetry: Telemetry): Promise<void> {
  const config = loadConfig();
  // The provisioner's bus is the partner scope (config.INSTANCE_ID): its streams, its requests.
  const { log, db, nc, bus } = await bootService<ProvisionerDatabase>({
    service: 'provisioner',
    config,
    migrations: provisionerMigrations,
  });
  const provisioner = createProvisioner({ db, bus, nc, log, config });
  await provisioner.start();

  handleShutdown(log, [
    ['provisioner', () => provisioner.stop()],
    ['nats', () => nc.drain()],
    ['database', () => db.destroy()],
    ['telemetry', () => telemetry.shutdown()],
  ]);
}
