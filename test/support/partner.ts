import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDb } from '@switchboard/kit';
import {
  createPartner,
  type NewPartner,
  type ProvisionerDatabase,
  provisionerBox,
} from '@switchboard/provisioner';
import { type SandboxHandle, sandboxSettings, startSandbox } from '@switchboard/sandbox';
import { freePort, repoRoot, type ServiceProcess, spawnService, waitFor } from '@switchboard/testkit/tools';
import type { Kysely } from 'kysely';
import { Agent, type Dispatcher, request } from 'undici';

export const PROVISIONER_SECRET = 'provisioner-test-secret-key-0123456789';

export interface PartnerStackOptions {
  natsUrl: string;
  /** A server URL whose role may create databases. */
  pgAdminUrl: string;
  /** The provisioning database (empty or migrated). */
  databaseUrl: string;
  /** Instance databases are named with it (a test run's prefix, so its teardown drops them). */
  instanceDatabasePrefix: string;
  env?: Record<string, string>;
}

export interface SandboxNumber {
  phone_number_id: string;
  display_phone_number: string;
  api_key: string;
}

export interface PartnerStack {
  sandbox: SandboxHandle;
  db: Kysely<ProvisionerDatabase>;
  partnerUrl: string;
  edgePort: number;
  provisioner: ServiceProcess;
  gateway: ServiceProcess;
  /** Starts a fresh provisioner (after the previous one stopped or was killed). */
  restartProvisioner(): Promise<void>;
  newPartner(name: string): Promise<NewPartner>;
  newNumber(): Promise<SandboxNumber>;
  /** A request to the partner API. */
  partner(
    method: string,
    path: string,
    opts?: { key?: string; body?: unknown; cookie?: string },
  ): Promise<Response>;
  /** A request to `<subdomain>.localhost` through the edge, as `curl` does it (it resolves `*.localhost` itself). */
  instance(
    url: string,
    opts?: { method?: Dispatcher.HttpMethod; token?: string; body?: unknown },
  ): Promise<{ status: number; json: unknown; text: string }>;
  customerSays(phoneNumberId: string, waId: string, text: string): Promise<void>;
  /** Stops every instance process, the services, the sandbox. */
  stop(): Promise<void>;
}

/**
 * `*.localhost` names resolve to loopback in curl and browsers, not in Node's resolver (glibc
 * without nss-myhostname): this agent does what they do.
 */
export const localhostAgent = new Agent({
  connect: {
    lookup: (hostname, options, callback) => {
      const address = hostname === 'localhost' || hostname.endsWith('.localhost') ? '127.0.0.1' : undefined;
      if (!address) {
        callback(new Error(`not a localhost name: ${hostname}`), '', 4);
        return;
      }
      if ((options as { all?: boolean }).all) callback(null, [{ address, family: 4 }]);
      else callback(null, address, 4);
    },
  },
});

/** The partner stack on real processes: the sandbox (in process), the provisioner and the gateway in partner mode. */
export async function startPartnerStack(o: PartnerStackOptions): Promise<PartnerStack> {
  const sandbox = await startSandbox({
    settings: sandboxSettings({ behaviour: { statusDelaysMs: { sent: 20, delivered: 40, read: 60 } } }),
  });
  const edgePort = await freePort();
  const partnerPort = await freePort();
  const logDir = await mkdtemp(join(tmpdir(), 'switchboard-instances-'));
  const provisionerEnv = {
    INSTANCE_LOG_DIR: logDir,
    DATABASE_URL: o.databaseUrl,
    INSTANCE_DATABASE_ADMIN_URL: o.pgAdminUrl,
    INSTANCE_DATABASE_PREFIX: o.instanceDatabasePrefix,
    NATS_URL: o.natsUrl,
    PROVISIONER_SECRET_KEY: PROVISIONER_SECRET,
    EDGE_PORT: String(edgePort),
    NETWORK_BASE_URL: sandbox.url,
    PARTNER_HUB_URL: `${sandbox.url}/api/v2`,
    PARTNER_HUB_API_KEY: 'test-hub-key',
    INSTANCE_ENTRY: join(repoRoot, 'services/inbox/src/main.ts'),
    INSTANCE_EXTRA_ENV: JSON.stringify({
      LOG_LEVEL: 'warn',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_RETRY_SCHEDULE: '0s,200ms,500ms,1s',
    }),
    PARTNER_EVENTS_ALLOW_PRIVATE_TARGETS: 'true',
    PARTNER_EVENTS_RETRY_SCHEDULE: '0s,200ms,500ms,1s',
    ...o.env,
  };
  const spawnProvisioner = () =>
    spawnService(join(repoRoot, 'services/provisioner/src/main.ts'), provisionerEnv);
  const db = createDb<ProvisionerDatabase>({ url: o.databaseUrl, applicationName: 'partner-test', max: 2 });
  const stack: PartnerStack = {
    sandbox,
    db,
    partnerUrl: `http://127.0.0.1:${partnerPort}`,
    edgePort,
    provisioner: spawnProvisioner(),
    gateway: spawnService(join(repoRoot, 'services/gateway/src/partner-main.ts'), {
      NATS_URL: o.natsUrl,
      PORT: String(partnerPort),
      PARTNER_SESSION_SECRET: 'partner-session-secret-0123456789abcdef',
    }),
    async restartProvisioner() {
      stack.provisioner = spawnProvisioner();
      await waitFor(
        async () => (await fetch(`http://127.0.0.1:${edgePort}/`).catch(() => undefined)) !== undefined,
        30_000,
        () => `provisioner edge (${stack.provisioner.output()})`,
      );
    },
    async newPartner(name) {
      return createPartner({ db, box: provisionerBox(PROVISIONER_SECRET) }, name);
    },
    async newNumber() {
      const res = await fetch(`${sandbox.url}/sandbox/numbers`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      if (res.status !== 201) throw new Error(`sandbox number ${res.status}: ${await res.text()}`);
      return (await res.json()) as SandboxNumber;
    },
    partner(method, path, opts = {}) {
      return fetch(`${stack.partnerUrl}${path}`, {
        method,
        headers: {
          ...(opts.body !== undefined && { 'content-type': 'application/json' }),
          ...(opts.key && { authorization: `Bearer ${opts.key}` }),
          ...(opts.cookie && { cookie: opts.cookie }),
        },
        ...(opts.body !== undefined && { body: JSON.stringify(opts.body) }),
      });
    },
    async instance(url, opts = {}) {
      const res = await request(url, {
        method: opts.method ?? 'GET',
        dispatcher: localhostAgent,
        headers: {
          ...(opts.body !== undefined && { 'content-type': 'application/json' }),
          ...(opts.token && { authorization: `Token ${opts.token}` }),
        },
        ...(opts.body !== undefined && { body: JSON.stringify(opts.body) }),
      });
      const text = await res.body.text();
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      return { status: res.statusCode, json, text };
    },
    async customerSays(phoneNumberId, waId, text) {
      const res = await fetch(
        `${sandbox.url}/sandbox/customers/${waId}/messages?phone_number_id=${phoneNumberId}`,
        {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ type: 'text', text: { body: text } }),
        },
      );
      if (res.status >= 300) throw new Error(`customer message ${res.status}: ${await res.text()}`);
    },
    async stop() {
      await Promise.all([stack.provisioner.stop(), stack.gateway.stop()]);
      // Instances outlive the provisioner by design: stop each one it recorded.
      const rows = await db.selectFrom('instances').select('pid').where('pid', 'is not', null).execute();
      for (const { pid } of rows) {
        if (pid === null) continue;
        try {
          process.kill(pid, 'SIGTERM');
        } catch {
          // already gone
        }
      }
      await waitFor(
        async () =>
          rows.every(({ pid }) => {
            try {
              if (pid !== null) process.kill(pid, 0);
              return pid === null;
            } catch {
              return true;
            }
          }),
        30_000,
        'instance processes to stop',
      ).catch(() => undefined);
      await db.destroy();
      await sandbox.close();
      await localhostAgent.close();
      await rm(logDir, { recursive: true, force: true });
    },
  };
  await waitFor(
    async () => (await fetch(`${stack.partnerUrl}/health`).catch(() => undefined))?.status === 200,
    30_000,
    () => `partner gateway (${stack.gateway.output()})`,
  );
  await waitFor(
    async () => (await fetch(`http://127.0.0.1:${edgePort}/`).catch(() => undefined)) !== undefined,
    30_000,
    () => `provisioner edge (${stack.provisioner.output()})`,
  );
  return stack;
}
