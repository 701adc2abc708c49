import type { Mailer } from '@switchboard/kit';
import {
  createHeaderSigner,
  createHttpServer,
  createOutboxRelay,
  type HttpServer,
  installInboxErrorHandling,
  type Logger,
  registerOpenApi,
} from '@switchboard/kit';
import { MEDIA_UPLOADER_PURPOSE } from '@switchboard/proto';
import { type Bus, outboxPublisher } from '@switchboard/proto/bus';
import type { Kysely } from 'kysely';
import {
  createAudit,
  createRightsNotifier,
  GATEWAY_OUTBOX,
  gatewayOutboxContracts,
} from './adapters/audit.ts';
import { mediaServiceSink } from './adapters/media-sink.ts';
import { createPrincipalCache, type PrincipalCache } from './adapters/principal-cache.ts';
import { createTokenBox } from './adapters/secrets.ts';
import type { GatewayConfig } from './config.ts';
import { createGuards, type Guards } from './http/guards.ts';
import { auditLogRoutes } from './routes/audit-logs.ts';
import { authRoutes } from './routes/auth.ts';
import { chatImportRoutes } from './routes/chat-import.ts';
import { chatTaggingRoutes } from './routes/chat-tagging.ts';
import { chatRoutes } from './routes/chats.ts';
import { contactProviderRoutes } from './routes/contact-providers.ts';
import { contactRoutes } from './routes/contacts.ts';
import { groupRoutes } from './routes/groups.ts';
import { type HealthChecks, healthRoutes } from './routes/health.ts';
import { inboundDeadLetterRoutes } from './routes/inbound-dead-letters.ts';
import { markAsReceivedRoutes } from './routes/mark-as-received.ts';
import { mediaRoutes } from './routes/media.ts';
import { messageTaggingRoutes } from './routes/message-tagging.ts';
import { messageRoutes } from './routes/messages.ts';
import { personRoutes } from './routes/persons.ts';
import { pushTokenRoutes } from './routes/push-tokens.ts';
import { savedResponseRoutes } from './routes/saved-responses.ts';
import { taggingEventRoutes } from './routes/tagging-events.ts';
import { tagRoutes } from './routes/tags.ts';
import { templateRoutes } from './routes/templates.ts';
import { userRoutes } from './routes/users.ts';
import { wabaWebhookRoutes } from './routes/waba-webhook.ts';
import { webhookRoutes } from './routes/webhooks.ts';
import { whatsappAccountRoutes } from './routes/whatsapp-accounts.ts';
import type { GatewayDatabase } from './store/db.ts';
import { createFailureLimiter } from './store/rate-limit.ts';
import { createGroups } from './use-cases/groups.ts';
import { createPasswordless } from './use-cases/passwordless.ts';
import { createTokens, type Tokens } from './use-cases/tokens.ts';
import { createUsers, type Users } from './use-cases/users.ts';

/** Every route plugin is registered under it. */
const API_PREFIX = '/api/v1';

export interface GatewayDeps {
  log: Logger;
  bus: Bus;
  db: Kysely<GatewayDatabase>;
  config: GatewayConfig;
  mailer: Mailer;
  health: HealthChecks;
  /** Told after a push token is registered, changed or deleted (the push notifier follows or leaves the events). */
  pushTokensChanged?: () => Promise<void>;
}

export interface Gateway {
  app: HttpServer;
  users: Users;
  tokens: Tokens;
  guards: Guards;
  principals: PrincipalCache;
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
  const principals = createPrincipalCache({ ttlMs: config.IDENTITY_CACHE_TTL_MS });
  const announceRightsChange = createRightsNotifier(bus, log);
  // This process forgets at once, before the change is answered; other gateways on the event.
  const rightsChanged = async (userIds: number[]) => {
    principals.dropUsers(userIds);
    await announceRightsChange(userIds);
  };
  const tokens = createTokens({
    db,
    principals,
    // A revoked token must stop working on every gateway, not only after the cache expires.
    tokenRevoked: (userId) => rightsChanged([userId]),
    box: createTokenBox(config.INBOX_SECRET_KEY),
    refreshTtlSeconds: config.REFRESH_TOKEN_TTL_SECONDS,
    passwordlessTtlSeconds: config.PASSWORDLESS_LINK_TTL_SECONDS,
  });
  const users = createUsers({
    db,
    audit,
    rightsChanged,
    maxSeats: config.MAX_NUMBER_OF_SEATS,
    referenceCacheTtlMs: config.IDENTITY_CACHE_TTL_MS,
  });
  // Groups change what users' API objects show too: this process forgets them at once.
  const groups = createGroups(db, audit, async (ids) => {
    users.forget(ids);
    await rightsChanged(ids);
  });
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

  // One Fastify plugin per resource, each under the API prefix; the paths inside start at the
  // resource. Registered in this order, which is the order of the OpenAPI document.
  const api = { prefix: API_PREFIX, bus, guards, publicUrl: config.PUBLIC_URL };
  await app.register(healthRoutes, { prefix: API_PREFIX, checks: deps.health });
  await app.register(wabaWebhookRoutes, {
    prefix: API_PREFIX,
    bus,
    secret: config.WABA_WEBHOOK_SECRET,
    verifyToken: config.WABA_VERIFY_TOKEN,
  });
  await app.register(authRoutes, {
    prefix: API_PREFIX,
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
  await app.register(userRoutes, {
    prefix: API_PREFIX,
    users,
    guards,
    publicUrl: config.PUBLIC_URL,
    availabilityEnabled: config.APP_IS_USER_AVAILABILITY_ENABLED,
  });
  await app.register(groupRoutes, { prefix: API_PREFIX, groups, guards, publicUrl: config.PUBLIC_URL });
  await app.register(auditLogRoutes, api);
  await app.register(inboundDeadLetterRoutes, api);
  await app.register(messageRoutes, { ...api, users, groups });
  await app.register(chatRoutes, { ...api, users, groups });
  // Uploads and imported files reach the media service under the gateway's signature.
  const uploaderSigner = createHeaderSigner(config.INBOX_SECRET_KEY, MEDIA_UPLOADER_PURPOSE);
  await app.register(chatImportRoutes, {
    ...api,
    users,
    groups,
    media: mediaServiceSink({ mediaUrl: config.MEDIA_URL, uploaderSigner }),
    maxBytes: config.CHAT_IMPORT_MAX_BYTES,
  });
  await app.register(markAsReceivedRoutes, api);
  await app.register(personRoutes, api);
  await app.register(templateRoutes, api);
  await app.register(whatsappAccountRoutes, api);
  await app.register(contactRoutes, api);
  await app.register(contactProviderRoutes, api);
  await app.register(tagRoutes, api);
  await app.register(chatTaggingRoutes, api);
  await app.register(messageTaggingRoutes, api);
  await app.register(taggingEventRoutes, api);
  await app.register(savedResponseRoutes, api);
  await app.register(pushTokenRoutes, {
    prefix: API_PREFIX,
    db,
    guards,
    publicUrl: config.PUBLIC_URL,
    ttlDays: config.PUSH_TOKEN_TTL_DAYS,
    tokensChanged: deps.pushTokensChanged ?? (async () => {}),
  });
  await app.register(mediaRoutes, {
    prefix: API_PREFIX,
    guards,
    mediaUrl: config.MEDIA_URL,
    uploaderSigner,
  });
  await app.register(webhookRoutes, { prefix: API_PREFIX, bus, authenticate: guards.authenticate });
  return { app, users, tokens, guards, principals };
}
