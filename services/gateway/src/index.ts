// The gateway as a library, for the cross-service tests in test/ and for tools: a test of
// another package reaches the gateway only through what is exported here (or over HTTP/NATS).
export { buildApp, type Gateway, type GatewayDeps } from './app.ts';
export type { GatewayDatabase } from './identity/db.ts';
export { createMailer, type Mailer } from './identity/mailer.ts';
export { createTokenBox } from './identity/secrets.ts';
export { gatewayMigrations } from './migrations/index.ts';
export { callService } from './routes/bus-call.ts';
export { registerWebhookRoutes } from './routes/webhooks.ts';
