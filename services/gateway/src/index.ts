// The gateway as a library, for the single-process inbox (services/inbox), the cross-service
// tests in test/ and tools: another package reaches the gateway only through what is exported
// here (or over HTTP/NATS).
export { buildApp, type Gateway, type GatewayDeps } from './app.ts';
export { type GatewayConfig, GatewayConfigSchema, loadConfig } from './config.ts';
export type { GatewayDatabase } from './identity/db.ts';
export { createMailer, type Mailer } from './identity/mailer.ts';
export { createTokenBox } from './identity/secrets.ts';
export { gatewayMigrations } from './migrations/index.ts';
export { callService } from './routes/bus-call.ts';
export type { HealthChecks } from './routes/health.ts';
export { registerWebhookRoutes } from './routes/webhooks.ts';
export { createGateway, type GatewayService } from './service.ts';
