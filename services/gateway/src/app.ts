import {
  createHttpServer,
  createOutboxRelay,
  type HttpServer,
  installInboxErrorHandling,
  type Logger,
  registerOpenApi,
} from '@switchboard/kit';
import { type Bus, outboxPublisher } from '@switchboard/proto';
import type { Kysely } from 'kysely';
import type { GatewayConfig } from './config.ts';
import {
  createAudit,
  createRightsNotifier,
  GATEWAY_OUTBOX,
  gatewayOutboxContracts,
} from './identity/audit.ts';
import { createGuards, type Guards } from './identity/authenticate.ts';
import type { GatewayDatabase } from './identity/db.ts';
import { createGroups } from './identity/groups.ts';
import type { Mailer } from './identity/mailer.ts';
import { createPasswordless } from './identity/passwordless.ts';
import { createFailureLimiter } from './identity/rate-limit.ts';
import { createTokenBox } from './identity/secrets.ts';
import { createTokens, type Tokens } from './identity/tokens.ts';
import { createUsers, type Users } from './identity/users.ts';
import { registerAuditLogRoutes } from './routes/audit-logs.ts';
import { registerAuthRoutes } from './routes/auth.ts';
import { registerGroupRoutes } from './routes/groups.ts';
import { type HealthChecks, registerHealthRoutes } from './routes/health.ts';
import { registerInboundDeadLetterRoutes } from './routes/inbound-dead-letters.ts';
import { registerMessagingRoutes } from './routes/messaging.ts';
import { registerUserRoutes } from './routes/users.ts';
import { registerWabaWebhookRoutes } from './routes/waba-webhook.ts';
import { registerWebhookRoutes } from './routes/webhooks.ts';

export interface GatewayDeps {
  log: Logger;
  bus: Bus;
  db: Kysely<GatewayDatabase>;
  config: GatewayConfig;
  mailer: Mailer;
  health: HealthChecks;
}

export interface Gateway {
  app: HttpServer;
  users: Users;
  tokens: Tokens;
  guards: Guards;
}

/** Builds the inbox HTTP API without listening, so tests can `inject()` or listen on port 0. */
export async function buildApp(deps: GatewayDeps): Promise<Gateway> {
  const { config, db, bus, log } = deps;
  // Bad input is a 400 at the edge, never a failure further in: PostgreSQL stores no NUL and no
  // unpaired surrogate, and an empty path segment names nothing.
  const app = createHttpServer({
    logger: log,
    trustProxy: config.TRUST_PROXY,
    refuseUnstorableText: true,
    refuseBlankPathParams: true,
  });
  installInboxErrorHandling(app);
  app.decorateRequest('principal', null);
  await registerOpenApi(app, {
    title: `${config.INBOX_SERVICE_NAME} inbox API`,
    version: '1.0.0',
    description:
      'REST inbox in front of the WhatsApp Business API for one business number. Authenticate with ' +
      '`Authorization: Token <token>` (from `POST /api/v1/auth/token/`). Errors are `{code, reason, fields?}`. ' +
      'Roles: `admin`, `user` (agent), `configurator` (service account: admin rights except messaging). ' +
      'Chat permissions `can_read_chats` / `can_write_to_chats`: `all`, `assigned`, `none`.',
    jsonPath: '/api/v1/schema/',
    docsPrefix: '/api/v1/docs',
    securitySchemes: {
      token: { type: 'apiKey', in: 'header', name: 'Authorization', description: '`Token <token>`' },
    },
  });

  // Event-log entries leave through the outbox: written with the change, published after it.
  const outbox = createOutboxRelay({
    db,
    table: GATEWAY_OUTBOX,
    publish: outboxPublisher(bus, gatewayOutboxContracts),
    log,
  });
  outbox.start();
  app.addHook('onClose', async () => outbox.stop());
  const audit = createAudit(outbox);
  const tokens = createTokens({
    db,
    box: createTokenBox(config.INBOX_SECRET_KEY),
    refreshTtlSeconds: config.REFRESH_TOKEN_TTL_SECONDS,
    passwordlessTtlSeconds: config.PASSWORDLESS_LINK_TTL_SECONDS,
  });
  const rightsChanged = createRightsNotifier(bus, log);
  const users = createUsers({ db, audit, rightsChanged, maxSeats: config.MAX_NUMBER_OF_SEATS });
  const groups = createGroups(db, audit, rightsChanged);
  const guards = createGuards(tokens);
  const limiter = createFailureLimiter(db, config.AUTH_FAILURE_WINDOW_SECONDS);
  const passwordless = createPasswordless({
    db,
    tokens,
    mailer: deps.mailer,
    limiter,
    log,
    loginUrl: config.INBOX_FRONTEND_URL ?? `${config.PUBLIC_URL}/login/`,
    serviceName: config.INBOX_SERVICE_NAME,
    linkTtlSeconds: config.PASSWORDLESS_LINK_TTL_SECONDS,
    maxMailsPerAddress: config.PASSWORDLESS_MAX_MAILS_PER_ADDRESS,
  });

  registerHealthRoutes(app, deps.health);
  await registerWabaWebhookRoutes(app, {
    bus,
    secret: config.WABA_WEBHOOK_SECRET,
    verifyToken: config.WABA_VERIFY_TOKEN,
  });
  await registerAuthRoutes(app, {
    db,
    tokens,
    users,
    guards,
    limiter,
    passwordless,
    limits: {
      perUsername: config.AUTH_MAX_FAILURES_PER_USERNAME,
      perAddress: config.AUTH_MAX_FAILURES_PER_ADDRESS,
    },
  });
  registerUserRoutes(app, {
    users,
    guards,
    publicUrl: config.PUBLIC_URL,
    availabilityEnabled: config.APP_IS_USER_AVAILABILITY_ENABLED,
  });
  registerGroupRoutes(app, { groups, guards, publicUrl: config.PUBLIC_URL });
  registerAuditLogRoutes(app, { bus, guards, publicUrl: config.PUBLIC_URL });
  registerInboundDeadLetterRoutes(app, { bus, guards, publicUrl: config.PUBLIC_URL });
  registerMessagingRoutes(app, { bus, guards, users, groups, publicUrl: config.PUBLIC_URL });
  await registerWebhookRoutes(app, { bus, authenticate: guards.authenticate });
  return { app, users, tokens, guards };
}
