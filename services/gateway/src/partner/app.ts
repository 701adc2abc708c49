import fastifyCookie from '@fastify/cookie';
import fastifyJwt from '@fastify/jwt';
import { createHttpServer, type HttpServer, type Logger, registerOpenApi } from '@switchboard/kit';
import type { Bus } from '@switchboard/proto/bus';
import { createPartnerAuth, type SessionClaims } from './auth.ts';
import type { PartnerGatewayConfig } from './config.ts';
import { installPartnerErrorHandling } from './errors.ts';
import { partnerHealthRoutes } from './routes/health.ts';
import { partnerInstanceRoutes } from './routes/instances.ts';
import { partnerSessionRoutes } from './routes/session.ts';

export const PARTNER_API_VERSION = '1.1.2';

export interface PartnerAppDeps {
  log: Logger;
  /** The partner scope's bus (`PARTNER_SCOPE`): the provisioner answers there. */
  bus: Bus;
  config: PartnerGatewayConfig;
}

const DESCRIPTION = [
  'Partner provisioning: deploy, list and soft-delete inbox instances.',
  'Authenticate with `Authorization: Bearer <PARTNER_API_KEY>`, or with the session cookie from `POST /v1/auth/login`.',
  'Instances report back asynchronously to `configurator.webhook_url`: the token event `{"token"}` when ready, the errors',
  'event `{"errors":[{code,title,details,parameters?}]}` when creation needs the partner’s action (701: number already',
  'deployed). Events carry Standard Webhooks headers (`webhook-id`, `webhook-timestamp`, `webhook-signature`), signed with',
  'the partner’s webhook secret.',
].join(' ');

/** The partner API, never listening: tests `inject()`. */
export async function buildPartnerApp(deps: PartnerAppDeps): Promise<HttpServer> {
  const { log, bus, config } = deps;
  // PostgreSQL stores no NUL and no lone surrogate: refused at the edge (422), never a 500 later.
  const app = createHttpServer({
    logger: log,
    bodyLimit: 256 * 1024,
    trustProxy: config.TRUST_PROXY,
    refuseUnstorableText: true,
    refuseBlankPathParams: true,
    frameworkErrorBody: (_code, reason) => ({ detail: reason }),
  });
  installPartnerErrorHandling(app);
  await app.register(fastifyCookie);
  await app.register(fastifyJwt, {
    secret: config.PARTNER_SESSION_SECRET,
    sign: { algorithm: 'HS256', expiresIn: config.PARTNER_SESSION_TTL_SECONDS },
    verify: { algorithms: ['HS256'] },
  });
  await registerOpenApi(app, {
    title: 'Switchboard partner provisioning',
    version: PARTNER_API_VERSION,
    description: DESCRIPTION,
    jsonPath: '/openapi.json',
    docsPrefix: '/docs',
    securitySchemes: { HTTPBearer: { type: 'http', scheme: 'bearer' } },
  });
  const auth = createPartnerAuth({
    bus,
    verifySession(token) {
      try {
        const claims = app.jwt.verify<Partial<SessionClaims>>(token);
        return typeof claims.partner_id === 'string' ? { partner_id: claims.partner_id } : null;
      } catch {
        return null;
      }
    },
  });
  await app.register(partnerHealthRoutes);
  await app.register(partnerSessionRoutes, {
    prefix: '/v1',
    bus,
    auth,
    signSession: (partnerId) => app.jwt.sign({ partner_id: partnerId }),
    ttlSeconds: config.PARTNER_SESSION_TTL_SECONDS,
    secureCookie: config.PARTNER_COOKIE_SECURE,
  });
  await app.register(partnerInstanceRoutes, { prefix: '/v1', bus, auth });
  return app;
}
