// The provisioner as a library, for the partner CLI (scripts/partner.ts), `npm start`, the
// cross-service tests and the benchmark: other packages reach it only through these exports
// (or over HTTP/NATS).

export type { InstanceSpec, Runtime, RuntimeStatus } from './adapters/runtime.ts';
export { loadConfig, type ProvisionerConfig, ProvisionerConfigSchema } from './config.ts';
export { errorsEventCatalogue } from './domain/errors-events.ts';
export { provisionerMigrations } from './migrations/index.ts';
export { createProvisioner, type ProvisionerService } from './service.ts';
export type { ProvisionerDatabase } from './store/db.ts';
export { createPartner, type NewPartner, provisionerBox } from './use-cases/partners.ts';
