import { join } from 'node:path';
import { type SandboxHandle, sandboxSettings, startSandbox } from '@switchboard/sandbox';
import {
  freePort,
  freshDatabase,
  repoRoot,
  type ServiceProcess,
  spawnService,
  type TestDatabase,
  testNatsUrl,
  uniqueInstanceId,
  waitFor,
} from '@switchboard/testkit';

export const ADMIN = { username: 'admin', password: 'a sturdy operator phrase 7' };

export interface Inbox {
  url: string;
  sandbox: SandboxHandle;
  db: TestDatabase;
  env: Record<string, string>;
  gateway: ServiceProcess;
  chats: ServiceProcess;
  fanout: ServiceProcess | undefined;
  /** Starts a fresh chats process (after the previous one was stopped or killed). */
  restartChats(): Promise<void>;
  api(
    method: string,
    path: string,
    opts?: { token?: string; body?: unknown; headers?: Record<string, string> },
  ): Promise<Response>;
  login(username?: string, password?: string): Promise<string>;
  customerSays(waId: string, body: Record<string, unknown>): Promise<{ id: string }>;
  stop(): Promise<void>;
}

/**
 * A whole inbox on real infrastructure: the sandbox network in-process, the gateway and chats
 * as their own processes on a fresh database and NATS namespace, wired as in production
 * (signed network webhooks, the webhook URL registered by chats at start).
 */
export interface InboxOptions {
  statusDelaysMs?: { sent: number; delivered: number; read: number };
  /** Also run the fan-out worker. */
  fanout?: boolean;
  /** Extra environment for every service (e.g. OTEL_* to export traces). */
  env?: Record<string, string>;
}

export async function startInbox(opts: InboxOptions = {}): Promise<Inbox> {
  const sandbox = await startSandbox({
    settings: sandboxSettings({
      behaviour: {
        statusDelaysMs: opts.statusDelaysMs ?? { sent: 20, delivered: 40, read: 60 },
        templateOpensWindow: true,
      },
      webhookRetryScheduleMs: [100, 200, 400, 800, 1000, 1000, 1000, 1000, 1000, 1000],
    }),
  });
  const seed = sandbox.seed;
  if (!seed) throw new Error('sandbox has no seed number');
  const db = await freshDatabase('inbox');
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const env: Record<string, string> = {
    DATABASE_URL: db.url,
    NATS_URL: testNatsUrl(),
    INSTANCE_ID: uniqueInstanceId('inbox'),
    PUBLIC_URL: url,
    NETWORK_BASE_URL: sandbox.url,
    NETWORK_API_KEY: seed.apiKey,
    WABA_PHONE_NUMBER: seed.displayPhoneNumber,
    WABA_WEBHOOK_SECRET: seed.webhookSecret,
    ...opts.env,
  };
  const gateway = spawnService(join(repoRoot, 'services/gateway/src/main.ts'), {
    ...env,
    PORT: String(port),
    INBOX_SECRET_KEY: 'inbox-test-secret-key-0123456789abcdef',
    INBOX_ADMIN_USERNAME: ADMIN.username,
    INBOX_ADMIN_PASSWORD: ADMIN.password,
  });
  const chatsEntry = join(repoRoot, 'services/chats/src/main.ts');
  const inbox: Inbox = {
    url,
    sandbox,
    db,
    env,
    gateway,
    chats: spawnService(chatsEntry, env),
    fanout: opts.fanout
      ? spawnService(join(repoRoot, 'services/fanout/src/main.ts'), {
          ...env,
          // The gateway's key: one instance secret for every service.
          INBOX_SECRET_KEY: 'inbox-test-secret-key-0123456789abcdef',
          // Test receivers listen on loopback.
          WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
          WEBHOOK_RETRY_SCHEDULE: '0s,200ms,500ms,1s',
        })
      : undefined,
    async restartChats() {
      inbox.chats = spawnService(chatsEntry, env);
    },
    api(method, path, o = {}) {
      return fetch(`${url}${path}`, {
        method,
        headers: {
          ...(o.body !== undefined && { 'content-type': 'application/json' }),
          ...(o.token && { authorization: `Token ${o.token}` }),
          ...o.headers,
        },
        ...(o.body !== undefined && { body: JSON.stringify(o.body) }),
      });
    },
    async login(username = ADMIN.username, password = ADMIN.password) {
      const res = await inbox.api('POST', '/api/v1/auth/token/', { body: { username, password } });
      if (res.status !== 200) throw new Error(`login ${res.status}: ${await res.text()}`);
      return ((await res.json()) as { token: string }).token;
    },
    async customerSays(waId, body) {
      const res = await fetch(`${sandbox.url}/sandbox/customers/${waId}/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (res.status >= 300) throw new Error(`customer message ${res.status}: ${await res.text()}`);
      return (await res.json()) as { id: string };
    },
    async stop() {
      await Promise.all([inbox.gateway.stop(), inbox.chats.stop(), inbox.fanout?.stop()]);
      await sandbox.close();
      await db.drop();
    },
  };
  await waitFor(
    async () => (await fetch(`${url}/api/v1/status/health/`)).status === 200,
    30_000,
    () => `gateway health (${gateway.output()})`,
  );
  // chats registers the inbox's webhook URL with the network at start.
  await waitFor(
    async () => {
      const res = await fetch(`${sandbox.url}/sandbox/numbers/${seed.phoneNumberId}`);
      const n = (await res.json()) as { webhook_url?: string | null };
      return n.webhook_url === `${url}/api/v1/waba/webhook/`;
    },
    30_000,
    () => `webhook registration (${inbox.chats.output()})`,
  );
  return inbox;
}
