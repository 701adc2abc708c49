import { bootService, handleShutdown, type Telemetry } from '@switchboard/kit';
import { createNetworkClient } from '@switchboard/proto';
import { startAuditLog } from './audit-log.ts';
import { loadConfig } from './config.ts';
import type { ChatsDatabase } from './db.ts';
import { startDeadLetterRpc } from './dead-letters.ts';
import { startInboundConsumer } from './inbound.ts';
import { chatsMigrations } from './migrations/index.ts';
import { startRpc } from './rpc.ts';
import { createSender, startDeliveryWorker } from './send.ts';

export async function runChats(telemetry: Telemetry): Promise<void> {
  const config = loadConfig();
  const { log, db, nc, bus } = await bootService<ChatsDatabase>({
    service: 'chats',
    config,
    migrations: chatsMigrations,
  });
  const network = createNetworkClient({
    baseUrl: config.NETWORK_BASE_URL,
    apiKey: config.NETWORK_API_KEY,
    onRetry: (e) =>
      log.warn({ operation: e.operation, attempt: e.attempt, delayMs: e.delayMs }, 'network call retried'),
  });
  const webhookUrl = config.PUBLIC_URL
    ? new URL('/api/v1/waba/webhook/', config.PUBLIC_URL).toString()
    : null;

  if (config.CHATS_TEST_FAIL_WA_IDS.size) {
    log.warn({ wa_ids: [...config.CHATS_TEST_FAIL_WA_IDS.keys()] }, 'CHATS_TEST_FAIL_WA_IDS test hook is on');
  }
  const inbound = await startInboundConsumer({ bus, db, log, failFor: config.CHATS_TEST_FAIL_WA_IDS });
  const audit = await startAuditLog({ bus, db, log });
  const delivery = await startDeliveryWorker({
    db,
    bus,
    log,
    network,
    phoneNumber: config.WABA_PHONE_NUMBER,
  });
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
  const deadLetters = startDeadLetterRpc({ db, bus, log });
  const stranded = await createSender({ db, bus, log }).requeueStranded();
  if (stranded) log.warn({ stranded }, 're-queued messages that were stored but not queued');

  // The network allows one webhook URL per number: point it at this inbox. A failure here must
  // not stop the worker (the network may be down now); it is logged and retried on next start.
  if (webhookUrl) {
    network.setWebhook({ url: webhookUrl }).then(
      () => log.info({ webhookUrl }, 'webhook URL registered with the network'),
      (err: unknown) => log.error({ err, webhookUrl }, 'webhook URL not registered with the network'),
    );
  }
  log.info({ instance: config.INSTANCE_ID }, 'chats worker consuming');

  handleShutdown(log, [
    [
      'request handlers',
      async () => {
        for (const s of [...rpc, ...deadLetters, audit.rpc]) s.unsubscribe();
      },
    ],
    ['inbound consumer', () => inbound.stop()],
    ['event-log consumer', () => audit.consumption.stop()],
    ['delivery worker', () => delivery.stop()],
    ['nats', () => nc.drain()],
    ['network client', () => network.close()],
    ['database', () => db.destroy()],
    ['telemetry', () => telemetry.shutdown()],
  ]);
}
