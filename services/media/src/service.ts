import type { NatsConnection } from '@switchboard/kit';
import {
  createHeaderSigner,
  createHttpServer,
  type HttpServer,
  installInboxErrorHandling,
  pingDb,
  type ServiceDeps,
} from '@switchboard/kit';
import { MEDIA_UPLOADER_PURPOSE } from '@switchboard/proto';
import type { Consumption } from '@switchboard/proto/bus';
import { createNetworkClient, type NetworkClient } from '@switchboard/proto/network';
import { createObjectStoreStorage } from './adapters/object-store.ts';
import type { MediaStorage } from './adapters/storage.ts';
import { limitsFromConfig, type MediaConfig } from './config.ts';
import type { MediaDatabase } from './db.ts';
import { registerMediaRoutes } from './routes/media.ts';
import { startRpc } from './rpc.ts';
import { startInboundMediaWorker } from './workers/inbound-media.ts';
import { type OrphanSweeper, startOrphanSweeper } from './workers/orphan-sweeper.ts';

export interface Media {
  /** The HTTP API (upload and retrieve), built but not listening until `start()`. */
  app: HttpServer;
  storage: MediaStorage;
  /** Consumes inbound media, serves the media requests, then listens on MEDIA_HOST:MEDIA_PORT. */
  start(): Promise<{ url: string }>;
  /** Stops listening (uploads in flight finish), then the consumer and requests. */
  stop(): Promise<void>;
}

/**
 * The media service: media files' bytes in the instance's object-store bucket, their metadata
 * in PostgreSQL, the upload and retrieve API behind the gateway, the fetch of customers' files
 * and the upload of ours to the network. The database must be migrated and the streams exist.
 */
export async function createMedia(
  deps: ServiceDeps<MediaDatabase, MediaConfig> & {
    /** The bus's connection, for the object store. */
    nc: NatsConnection;
    /** Defaults to the instance's JetStream Object Store bucket. */
    storage?: MediaStorage;
    network?: NetworkClient;
  },
): Promise<Media> {
  const { db, bus, log, config } = deps;
  const storage =
    deps.storage ??
    (await createObjectStoreStorage({ bus, nc: deps.nc, replicas: config.NATS_STREAM_REPLICAS }));
  const network =
    deps.network ??
    createNetworkClient({
      baseUrl: config.NETWORK_BASE_URL,
      apiKey: config.NETWORK_API_KEY,
      // The worker retries downloads itself with a fresh URL; uploads keep the client's retries.
      onRetry: (e) =>
        log.warn({ operation: e.operation, attempt: e.attempt, delayMs: e.delayMs }, 'network call retried'),
    });
  const limits = limitsFromConfig(config);
  const app = createHttpServer({ logger: log, refuseUnstorableText: true });
  installInboxErrorHandling(app);
  await registerMediaRoutes(app, {
    db,
    storage,
    limits,
    publicUrl: config.PUBLIC_URL,
    uploaderSigner: createHeaderSigner(config.INBOX_SECRET_KEY, MEDIA_UPLOADER_PURPOSE),
    uploadTimeoutMs: config.MEDIA_UPLOAD_TIMEOUT,
  });
  // For probes: ready when the database and NATS answer.
  app.get('/healthz', { schema: { hide: true } }, async (_req, reply) => {
    const [database, nats] = await Promise.all([pingDb(db), bus.ping()]);
    return reply.status(database && nats ? 200 : 503).send({ database, nats });
  });

  let consumption: Consumption | undefined;
  let subscriptions: Array<{ unsubscribe(): void }> = [];
  let sweeper: OrphanSweeper | undefined;

  return {
    app,
    storage,
    async start() {
      consumption = await startInboundMediaWorker({
        db,
        bus,
        log,
        storage,
        limits,
        network,
        publicUrl: config.PUBLIC_URL,
        legacyGraceMs: config.MEDIA_LEGACY_DURABLE_GRACE,
      });
      subscriptions = startRpc({ db, bus, log, storage, network });
      sweeper = startOrphanSweeper({
        db,
        storage,
        log,
        intervalMs: config.MEDIA_SWEEP_INTERVAL,
        graceMs: config.MEDIA_SWEEP_GRACE,
      });
      const url = await app.listen({ host: config.MEDIA_HOST, port: config.MEDIA_PORT });
      log.info({ instance: config.INSTANCE_ID, url }, 'media service listening');
      return { url };
    },
    async stop() {
      await app.close();
      for (const s of subscriptions.splice(0)) s.unsubscribe();
      await sweeper?.stop();
      await consumption?.stop();
      consumption = undefined;
      await network.close();
    },
  };
}
