import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import { createServer } from 'node:net';
import {
  createMailer,
  createOutboxRelay,
  type Mailer,
  type NatsConnection,
  type ServiceDeps,
  type Subscription,
} from '@switchboard/kit';
import { ProvisioningCommandSchema, provisioningCommand, provisioningConsumer } from '@switchboard/proto';
import type { Consumption } from '@switchboard/proto/bus';
import { createPartnerHubClient, type PartnerHubClient } from '@switchboard/proto/network';
import { activationPages } from './adapters/activation-pages.ts';
import { createEdge } from './adapters/edge.ts';
import { createLocalRuntime } from './adapters/local-runtime.ts';
import { createPartnerEventSender, type PartnerEventSender } from './adapters/partner-events.ts';
import type { Runtime } from './adapters/runtime.ts';
import type { ProvisionerConfig } from './config.ts';
import { startRpc } from './rpc.ts';
import type { ProvisionerDatabase } from './store/db.ts';
import { instanceBySubdomain, instancesToResume, updateInstance } from './store/instances.ts';
import { OUTBOX_TABLE, type PublicUrls, type UseCaseDeps } from './use-cases/deps.ts';
import { driveLifecycle } from './use-cases/drive-lifecycle.ts';
import { provisionerBox } from './use-cases/partners.ts';

export interface ProvisionerService {
  /** Serves the partner requests, consumes the lifecycle commands, resumes unfinished instances, opens the edge. */
  start(): Promise<void>;
  /** Stops intake, lets running steps finish, closes the edge; instances keep running unless RUNTIME_STOP_ON_EXIT. */
  stop(): Promise<void>;
  readonly urls: PublicUrls;
  /** Where the edge listens (after `start()`). */
  edgeAddress(): { host: string; port: number } | undefined;
}

async function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

export function publicUrls(config: ProvisionerConfig, edgePort: () => number): PublicUrls {
  const base = (sub: string) => `${sub}.${config.PARTNER_BASE_DOMAIN}`;
  const origin = (sub: string) => {
    const port = config.EDGE_PUBLIC_PORT ?? edgePort();
    const defaultPort = config.EDGE_PUBLIC_SCHEME === 'https' ? 443 : 80;
    return `${config.EDGE_PUBLIC_SCHEME}://${base(sub)}${port === defaultPort ? '' : `:${port}`}`;
  };
  return {
    baseDomain: base,
    healthCheck: (sub) => `${origin(sub)}/api/v1/status/health/`,
    activation: (sub, token) => `${origin(sub)}/activation/${token}`,
  };
}

/**
 * The provisioner, wired from its dependencies: the provisioning database (migrated), the
 * partner scope's bus and its NATS connection. Runtime, partner hub, event sender and mailer
 * default to the local runtime, the configured hub, the SSRF-guarded sender and SMTP.
 */
export function createProvisioner(
  deps: ServiceDeps<ProvisionerDatabase, ProvisionerConfig> & {
    nc: NatsConnection;
    runtime?: Runtime;
    hub?: PartnerHubClient;
    events?: PartnerEventSender;
    mailer?: Mailer;
  },
): ProvisionerService {
  const { db, bus, nc, log, config } = deps;
  let edge: Server | undefined;
  let edgePort = config.EDGE_PORT;
  const urls = publicUrls(config, () => edgePort);
  const runtime =
    deps.runtime ??
    createLocalRuntime({
      log: log.child({ component: 'local-runtime' }),
      nc,
      natsStreamReplicas: config.NATS_STREAM_REPLICAS,
      databaseAdminUrl: config.INSTANCE_DATABASE_ADMIN_URL ?? config.DATABASE_URL,
      node: config.INSTANCE_NODE,
      entry: config.INSTANCE_ENTRY,
      logDir: config.INSTANCE_LOG_DIR,
      onPid: (id, pid) => {
        updateInstance(db, id, { pid }).catch((err: unknown) =>
          log.warn({ err, instance: id }, 'could not record the instance’s process'),
        );
      },
    });
  const hub =
    deps.hub ??
    createPartnerHubClient({
      hubUrl: config.PARTNER_HUB_URL,
      networkUrl: config.NETWORK_BASE_URL,
      partnerId: config.PARTNER_HUB_PARTNER_ID,
      hubApiKey: config.PARTNER_HUB_API_KEY ?? 'unset',
    });
  const events =
    deps.events ??
    createPartnerEventSender({ allowPrivateTargets: config.PARTNER_EVENTS_ALLOW_PRIVATE_TARGETS });
  const mailer = deps.mailer ?? createMailer(config.SMTP_URL, config.MAIL_FROM, log);
  const outbox = createOutboxRelay({
    db,
    table: OUTBOX_TABLE,
    log,
    publish: async (m) => {
      if (m.contract !== provisioningCommand.name) throw new Error(`unknown outbox contract ${m.contract}`);
      await bus.publish(provisioningCommand, ProvisioningCommandSchema.parse(m.payload), {
        idempotencyKey: m.key,
      });
    },
  });
  const useCaseDeps: UseCaseDeps = {
    db,
    bus,
    nc,
    log,
    config,
    runtime,
    hub,
    events,
    mailer,
    box: provisionerBox(config.PROVISIONER_SECRET_KEY),
    urls,
    outbox,
    freePort: freeLoopbackPort,
  };
  // One lifecycle run per instance at a time in this process; a second command waits for it.
  const running = new Map<string, Promise<unknown>>();
  let subscriptions: Subscription[] = [];
  let consumption: Consumption | undefined;

  return {
    urls,
    edgeAddress: () => (edge ? { host: config.EDGE_HOST, port: edgePort } : undefined),
    async start() {
      outbox.start();
      subscriptions = startRpc(useCaseDeps);
      consumption = await bus.consume(provisioningConsumer, async ({ instance_id }) => {
        const before = running.get(instance_id) ?? Promise.resolve();
        const run = before.catch(() => undefined).then(() => driveLifecycle(useCaseDeps, instance_id));
        running.set(instance_id, run);
        try {
          return await run;
        } finally {
          if (running.get(instance_id) === run) running.delete(instance_id);
        }
      });
      edge = createEdge({
        log: log.child({ component: 'edge' }),
        baseDomain: config.PARTNER_BASE_DOMAIN,
        async resolve(subdomain) {
          const row = await instanceBySubdomain(db, subdomain);
          if (!row || row.port === null || (row.status !== 'ready' && row.status !== 'provisioning'))
            return undefined;
          return { port: row.port };
        },
        activation: activationPages(useCaseDeps),
      });
      const server = edge;
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(config.EDGE_PORT, config.EDGE_HOST, () => {
          const address = server.address();
          if (typeof address === 'object' && address) edgePort = address.port;
          resolve();
        });
      });
      // After a restart: every instance that should run, or still owes a step, is driven again.
      const boot = randomUUID();
      for (const row of await instancesToResume(db)) {
        await bus.publish(
          provisioningCommand,
          { instance_id: row.id, action: row.status === 'deleted' ? 'scale_to_zero' : 'provision' },
          { idempotencyKey: `resume:${row.id}:${boot}` },
        );
      }
      log.info({ edge: `${config.EDGE_HOST}:${edgePort}` }, 'provisioner started');
    },
    async stop() {
      const server = edge;
      if (server) {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
      for (const s of subscriptions) s.unsubscribe();
      subscriptions = [];
      await consumption?.stop();
      await outbox.stop();
      await runtime.close({ stopInstances: config.RUNTIME_STOP_ON_EXIT });
      await events.close();
      mailer.close();
    },
  };
}
