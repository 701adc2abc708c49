// The gateway as a library, for the single-process inbox (services/inbox), the cross-service
// tests in test/ and tools: another package reaches the gateway only through what is exported
// here (or over HTTP/NATS).

export { createTokenBox } from './adapters/secrets.ts';
export { buildApp, type Gateway, type GatewayDeps } from './app.ts';
export { type GatewayConfig, GatewayConfigSchema, loadConfig } from './config.ts';
export { gatewayMigrations } from './migrations/index.ts';
export { buildPartnerApp, PARTNER_API_VERSION, type PartnerAppDeps } from './partner/app.ts';
export {
  loadPartnerConfig,
  type PartnerGatewayConfig,
  PartnerGatewayConfigSchema,
} from './partner/config.ts';
export { createPartnerGateway, type PartnerGatewayService } from './partner/service.ts';
export { callService } from './routes/bus-call.ts';
export type { HealthChecks } from './routes/health.ts';
export { registerWebhookRoutes } from './routes/webhooks.ts';
export { createGateway, type GatewayService } from './service.ts';
export type { GatewayDatabase } from './store/db.ts';
