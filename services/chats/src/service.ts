import { createSecretBox, type SecretBox, type ServiceDeps } from '@switchboard/kit';
import type { Consumption } from '@switchboard/proto/bus';
import { createContactCheckClient, createNetworkClient } from '@switchboard/proto/network';
import { createHttpContactProviderClient } from './adapters/http-contact-provider.ts';
import { withInboxMedia } from './adapters/inbox-media.ts';
import type { ChatsConfig } from './config.ts';
import type { ChatsDatabase } from './db.ts';
import { createTtlCache, type ProviderContact } from './domain/contact-merge.ts';
import { startOrganisationRpc } from './organisation-rpc.ts';
import { startRpc } from './rpc.ts';
import { requeueStranded } from './use-cases/send-message.ts';
import { startAuditLogConsumer } from './workers/audit-log.ts';
import { startDeliveryWorker } from './workers/delivery.ts';
import { startInboundConsumer } from './workers/inbound.ts';

/** The box contact provider secrets are sealed in: its own key, derived from the instance secret. */
export function createContactProviderSecretsBox(instanceSecretKey: string): SecretBox {
  return createSecretBox(instanceSecretKey, 'chats:contact-provider-secrets');
}

export interface Chats {
  /**
   * Consumes the inbound stream, the event log's commands and the send commands, serves the
   * chats requests, re-queues messages stored but never queued, and registers the inbox's
   * webhook URL with the network (in the background: the network may be down now).
   */
  start(): Promise<void>;
  /** Stops taking requests and messages, lets handlers in flight finish, closes the network client. */
  stop(): Promise<void>;
}

/**
 * One chats worker, wired from its dependencies. The process entry point (server.ts) and the
 * single-process inbox (`services/inbox`) build it the same way; the database must be migrated
 * and the instance's streams must exist.
 */
export async function createChats(deps: ServiceDeps<ChatsDatabase, ChatsConfig>): Promise<Chats> {
  const { db, bus, log, config } = deps;
  const network = createNetworkClient({
    baseUrl: config.NETWORK_BASE_URL,
    apiKey: config.NETWORK_API_KEY,
    onRetry: (e) =>
      log.warn({ operation: e.operation, attempt: e.attempt, delayMs: e.delayMs }, 'network call retried'),
  });
  const webhookUrl = config.PUBLIC_URL
    ? new URL('/api/v1/waba/webhook/', config.PUBLIC_URL).toString()
    : null;

  const contactProviders = createHttpContactProviderClient({
    allowPrivateTargets: config.CONTACT_PROVIDERS_ALLOW_PRIVATE_TARGETS,
  });
  const organisation = {
    db,
    bus,
    log,
    network,
    contactCheck: createContactCheckClient({
      baseUrl: config.NETWORK_BASE_URL,
      apiKey: config.NETWORK_API_KEY,
    }),
    providers: contactProviders,
    providerSecrets: config.INBOX_SECRET_KEY
      ? createContactProviderSecretsBox(config.INBOX_SECRET_KEY)
      : null,
    contactCache: createTtlCache<ProviderContact[]>(config.CONTACT_CACHE_SECONDS * 1000),
  };

  const consumers: Array<{ name: string; consumption: Consumption }> = [];
  let requeueTimer: NodeJS.Timeout | undefined;
  let subscriptions: Array<{ unsubscribe(): void }> = [];

  return {
    async start() {
      if (config.CHATS_TEST_FAIL_WA_IDS.size) {
        log.warn(
          { wa_ids: [...config.CHATS_TEST_FAIL_WA_IDS.keys()] },
          'CHATS_TEST_FAIL_WA_IDS test hook is on',
        );
      }
      const inbound = await startInboundConsumer({ bus, db, log, failFor: config.CHATS_TEST_FAIL_WA_IDS });
      consumers.push({ name: 'inbound consumer', consumption: inbound });
      const audit = await startAuditLogConsumer({ bus, db, log });
      consumers.push({ name: 'event-log consumer', consumption: audit });
      const delivery = await startDeliveryWorker({
        db,
        bus,
        log,
        // This inbox's own media files are sent by the network's media id.
        network: withInboxMedia(network, { bus, publicUrl: config.PUBLIC_URL }),
        phoneNumber: config.WABA_PHONE_NUMBER,
      });
      consumers.push({ name: 'delivery worker', consumption: delivery });
      const rpc = startRpc({
        db,
        bus,
        log,
        network,
        account: {
          phone_number: config.WABA_PHONE_NUMBER,
          provider_base_url: config.NETWORK_BASE_URL,
          webhook_url: webhookUrl,
        },
        templateCacheSeconds: config.TEMPLATE_CACHE_SECONDS,
      });
      subscriptions = [...rpc, ...startOrganisationRpc(organisation)];

      // A send stored while NATS refused its command answered 503; the client may never retry.
      // Re-queue such sends at start and then every 30 s (the command's Nats-Msg-Id is the
      // message id, so one that was queued after all is not queued twice).
      const requeue = async () => {
        const stranded = await requeueStranded({ db, bus });
        if (stranded) log.warn({ stranded }, 're-queued messages that were stored but not queued');
      };
      await requeue();
      requeueTimer = setInterval(() => {
        requeue().catch((err: unknown) =>
          log.warn({ err }, 'stranded sends not re-queued; next round retries'),
        );
      }, 30_000);
      requeueTimer.unref();

      // The network allows one webhook URL per number: point it at this inbox. A failure here
      // must not stop the worker (the network may be down now); it is logged and retried on
      // the next start.
      if (webhookUrl) {
        network.setWebhook({ url: webhookUrl }).then(
          () => log.info({ webhookUrl }, 'webhook URL registered with the network'),
          (err: unknown) => log.error({ err, webhookUrl }, 'webhook URL not registered with the network'),
        );
      }
      log.info({ instance: config.INSTANCE_ID }, 'chats worker consuming');
    },

    async stop() {
      clearInterval(requeueTimer);
      for (const s of subscriptions) s.unsubscribe();
      subscriptions = [];
      // In order, each to the end: a consumer that fails to stop must not keep the others running.
      let failure: unknown;
      for (const { name, consumption } of consumers.splice(0)) {
        await consumption.stop().catch((err: unknown) => {
          log.error({ err, step: name }, 'chats consumer did not stop cleanly');
          failure ??= err;
        });
      }
      await network.close();
      await contactProviders.close();
      if (failure) throw failure;
    },
  };
}
