import { createMailer, type HttpServer, type Mailer, pingDb, type ServiceDeps } from '@switchboard/kit';
import {
  ensureConfigurator as ensureConfiguratorRpc,
  identityChanged,
  principalLookup,
} from '@switchboard/proto';
import { createUnconfiguredSender, createWebPushSender, type PushSender } from './adapters/push.ts';
import { buildApp } from './app.ts';
import type { GatewayConfig } from './config.ts';
import type { HealthChecks } from './routes/health.ts';
import type { GatewayDatabase } from './store/db.ts';
import { ensureAdmin, ensureConfigurator } from './use-cases/bootstrap.ts';
import { createPushNotifier } from './workers/push-notifier.ts';

export interface GatewayService {
  /** The inbox HTTP API, built but not listening until `start()`. */
  readonly app: HttpServer;
  /**
   * Creates the first admin (and the configured configurator) when missing, serves the
   * gateway's requests (`ensure_configurator`, `principal`), starts the push notifier (durable
   * `gateway-push`), then listens on HOST:PORT.
   */
  start(): Promise<void>;
  /**
   * Stops taking HTTP requests and lets those in flight finish (closing the app also stops the
   * outbox relay), lets the push notifier finish its notifications, then stops serving the
   * gateway's requests and closes the mailer. Closing
   * `app` first and calling `stop()` later is allowed (single-process mode does).
   */
  stop(): Promise<void>;
}

/**
 * The gateway, wired from its dependencies. The process entry point (server.ts) and the
 * single-process inbox (`services/inbox`) build it the same way; the database must be migrated
 * and the instance's streams must exist.
 */
export async function createGateway(
  deps: ServiceDeps<GatewayDatabase, GatewayConfig> & {
    /** Defaults to SMTP at `SMTP_URL` (or none); closed by `stop()`. */
    mailer?: Mailer;
    /** Defaults to this gateway's pool and NATS connection answering. */
    health?: HealthChecks;
  },
): Promise<GatewayService> {
  const { db, bus, log, config } = deps;
  const mailer = deps.mailer ?? createMailer(config.SMTP_URL, config.MAIL_FROM, log);
  const { app, users, tokens, principals } = await buildApp({
    log,
    bus,
    db,
    config,
    mailer,
    health: deps.health ?? { database: () => pingDb(db), nats: () => bus.ping() },
    // The notifier is made once the users are (it asks them who may read what).
    pushTokensChanged: () => pushNotifier.tokensChanged(),
  });
  let subscriptions: Array<{ unsubscribe(): void }> = [];
  const webPush: PushSender =
    config.VAPID_PUBLIC_KEY && config.VAPID_PRIVATE_KEY
      ? createWebPushSender({
          vapid: {
            subject: config.VAPID_SUBJECT,
            publicKey: config.VAPID_PUBLIC_KEY,
            privateKey: config.VAPID_PRIVATE_KEY,
          },
          allowPrivateTargets: config.PUSH_ALLOW_PRIVATE_TARGETS,
          log,
        })
      : createUnconfiguredSender('webpush', log);
  const senders = {
    webpush: webPush,
    fcm: createUnconfiguredSender('fcm', log),
    apns: createUnconfiguredSender('apns', log),
  };
  const pushNotifier = createPushNotifier({
    bus,
    db,
    log,
    senders,
    principalFor: (id) => users.principalFor(id),
    ttlDays: config.PUSH_TOKEN_TTL_DAYS,
    maxAgeSeconds: config.PUSH_MAX_AGE_SECONDS,
  });

  return {
    app,
    async start() {
      await ensureAdmin(
        db,
        users,
        {
          adminUsername: config.INBOX_ADMIN_USERNAME,
          adminEmail: config.INBOX_ADMIN_EMAIL,
          adminPassword: config.INBOX_ADMIN_PASSWORD,
        },
        log,
      );
      if (config.INBOX_CONFIGURATOR_USERNAME)
        await ensureConfigurator(db, tokens, config.INBOX_CONFIGURATOR_USERNAME);
      subscriptions = [
        bus.serve(ensureConfiguratorRpc, ({ username }) => ensureConfigurator(db, tokens, username)),
        bus.serve(principalLookup, async ({ user_id }) => ({ principal: await users.principalFor(user_id) })),
        // Rights changed through another gateway (an unreadable notice: forget everyone). A
        // user switched on or off may be the only one with a device.
        bus.subscribe(identityChanged, (change) => {
          principals.dropUsers(change?.user_ids ?? []);
          users.forget(change?.user_ids ?? []);
          void pushNotifier.tokensChanged();
        }),
      ];
      await pushNotifier.start();
      await app.listen({ host: config.HOST, port: config.PORT });
    },
    async stop() {
      await app.close();
      await pushNotifier.stop();
      await Promise.all(Object.values(senders).map((s) => s.close()));
      for (const s of subscriptions) s.unsubscribe();
      subscriptions = [];
      mailer.close();
    },
  };
}
