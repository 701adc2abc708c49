import { randomBytes } from 'node:crypto';
import multipart from '@fastify/multipart';
import { createHttpServer, type HttpServer, type Logger, registerOpenApi } from '@switchboard/kit';
import { createOutboundHttp } from './adapters/http-out.ts';
import { createScheduler } from './adapters/scheduler.ts';
import { registerBlockUserRoutes } from './routes/block-users.ts';
import { registerContactRoutes } from './routes/contacts.ts';
import { registerClockAndFaultRoutes } from './routes/control/clock-faults.ts';
import { registerCustomerRoutes } from './routes/control/customers.ts';
import { registerNumberRoutes } from './routes/control/numbers.ts';
import { installCloudApiErrorHandling } from './routes/errors.ts';
import { registerHealthRoute } from './routes/health.ts';
import { registerMediaRoutes } from './routes/media.ts';
import { registerMessageRoutes } from './routes/messages.ts';
import { registerPartnerHubRoutes } from './routes/partner-hub.ts';
import { registerTemplateRoutes } from './routes/templates.ts';
import { registerWebhookConfigRoutes } from './routes/webhook-config.ts';
import type { SandboxState } from './store/store.ts';
import { createInboundEngine } from './use-cases/inbound.ts';
import { createOutboundEngine } from './use-cases/outbound.ts';
import { createWebhookDispatcher } from './use-cases/webhooks.ts';

export interface SandboxDeps {
  log: Logger;
  state: SandboxState;
  /** Drives the random parts (read without delivered, duplicates); tests pass a fixed one. */
  random?: () => number;
}

const DESCRIPTION = [
  'An emulator of the provider’s WhatsApp Cloud API proxy for development, demos and tests.',
  'Cloud API routes (`/messages`, `/media`, `/{media_id}`, `/v1/configs/templates`, `/block_users`,',
  '`/v1/configs/webhook`) take the business number’s provider API key in `D360-API-KEY` and answer Meta’s bodies;',
  'failures are Graph-API error bodies `{"error":{"message","type","code","error_data":{"details"},"fbtrace_id"}}`.',
  'Routes under `/sandbox/` control the emulation: numbers and keys, customers and their messages, the clock,',
  'injected faults and the webhook delivery log.',
].join(' ');

/** The sandbox's HTTP app, never listening: tests `inject()` or listen on port 0. */
export async function buildSandbox(deps: SandboxDeps): Promise<HttpServer> {
  const { state, log } = deps;
  const settings = state.settings;
  const app = createHttpServer({ logger: log, bodyLimit: 4 * 1024 * 1024 });
  installCloudApiErrorHandling(app);
  await app.register(multipart, { limits: { fileSize: 100 * 1024 * 1024, files: 1, fields: 10, parts: 12 } });
  await registerOpenApi(app, {
    title: 'Switchboard network sandbox',
    version: '1.0.0',
    description: DESCRIPTION,
    jsonPath: '/sandbox/schema/',
    docsPrefix: '/sandbox/docs',
    securitySchemes: {
      d360ApiKey: {
        type: 'apiKey',
        in: 'header',
        name: 'D360-API-KEY',
        description: 'The business number’s provider API key',
      },
    },
  });

  const scheduler = createScheduler((err) => log.error({ err }, 'scheduled sandbox task failed'));
  const http = createOutboundHttp({
    webhookTimeoutMs: settings.webhookTimeoutMs,
    linkTimeoutMs: settings.mediaLinkTimeoutMs,
  });
  const dispatcher = createWebhookDispatcher({
    http,
    scheduler,
    log,
    retryScheduleMs: settings.webhookRetryScheduleMs,
    now: state.now,
  });
  const outbound = createOutboundEngine({
    state,
    http,
    dispatcher,
    scheduler,
    random: deps.random ?? Math.random,
    log,
  });
  const inbound = createInboundEngine({ state, dispatcher });

  registerHealthRoute(app);
  registerMessageRoutes(app, { state, outbound });
  registerMediaRoutes(app, { state, urlKey: randomBytes(32) });
  registerTemplateRoutes(app, { state });
  registerBlockUserRoutes(app, { state });
  registerContactRoutes(app, { state });
  registerWebhookConfigRoutes(app, { state });
  registerNumberRoutes(app, { state });
  registerCustomerRoutes(app, { state, inbound });
  registerClockAndFaultRoutes(app, { state });
  registerPartnerHubRoutes(app, { state });

  app.addHook('onClose', async () => {
    scheduler.close();
    await dispatcher.drain();
    await http.close();
  });
  return app;
}
