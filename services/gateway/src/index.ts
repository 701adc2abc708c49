export { gatewayMigrations } from './migrations/index.ts';
