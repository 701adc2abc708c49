import {
  createHttpServer,
  type HttpServer,
  installInboxErrorHandling,
  type Logger,
  registerOpenApi,
} from '@switchboard/kit';
import type { Bus } from '@switchboard/proto';
import { type HealthChecks, registerHealthRoutes } from './routes/health.ts';
import { registerWabaWebhookRoutes } from './routes/waba-webhook.ts';

export interface GatewayDeps {
  log: Logger;
  bus: Bus;
  health: HealthChecks;
  waba: { secret: string | undefined; verifyToken: string | undefined };
}

/** Builds the inbox HTTP API without listening, so tests can `inject()` or listen on port 0. */
export async function buildApp(deps: GatewayDeps): Promise<HttpServer> {
  const app = createHttpServer({ logger: deps.log });
  installInboxErrorHandling(app);
  await registerOpenApi(app, {
    title: 'Switchboard inbox API',
    version: '1.0.0',
    description:
      'REST inbox in front of the WhatsApp Business API for one business number. ' +
      'Authenticate with `Authorization: Token <token>`. Errors are `{code, reason, fields?}`.',
    jsonPath: '/api/v1/schema/',
    docsPrefix: '/api/v1/docs',
    securitySchemes: {
      token: { type: 'apiKey', in: 'header', name: 'Authorization', description: '`Token <token>`' },
    },
  });
  registerHealthRoutes(app, deps.health);
  await registerWabaWebhookRoutes(app, { bus: deps.bus, ...deps.waba });
  return app;
}
