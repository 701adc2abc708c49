import { createHmac } from 'node:crypto';
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
/** The instance secret every service of a test inbox gets (gateway and fanout must share it). */
const TEST_SECRET_KEY = 'inbox-test-secret-key-0123456789abcdef';

export interface Inbox {
  url: string;
  sandbox: SandboxHandle;
  db: TestDatabase;
  env: Record<string, string>;
  /** With `singleProcess`, gateway, chats and fanout are the one `services/inbox` process. */
  gateway: ServiceProcess;
  chats: ServiceProcess;
  fanout: ServiceProcess | undefined;
  /** The media service's own HTTP API (the gateway's MEDIA_URL). */
  mediaUrl: string;
  /** The media service (with `singleProcess`, the one inbox process). */
  media: ServiceProcess;
  /**
   * Starts a fresh chats process (after the previous one was stopped or killed); with
   * `singleProcess`, a fresh inbox process.
   */
  restartChats(): Promise<void>;
  /** Starts a fresh media process (after the previous one was stopped); with `singleProcess`, the inbox. */
  restartMedia(): Promise<void>;
  api(
    method: string,
    path: string,
    opts?: { token?: string; body?: unknown; headers?: Record<string, string> },
  ): Promise<Response>;
  login(username?: string, password?: string): Promise<string>;
  /** POSTs a body to the inbox's network webhook, signed with the number's app secret as the network does. */
  networkPost(body: string, contentType?: string): Promise<Response>;
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
  /**
   * Run gateway, chats and fanout as one process (`services/inbox/src/main.ts`, single-process
   * mode) with the same environment the separate processes get; implies `fanout`.
   */
  singleProcess?: boolean;
  /** Extra environment for every service (e.g. OTEL_* to export traces). */
  env?: Record<string, string>;
}

/** An inbox and the token of its admin, for a test file's `beforeAll`. */
export async function startInboxAsAdmin(opts: InboxOptions = {}): Promise<{ inbox: Inbox; admin: string }> {
  const inbox = await startInbox(opts);
  try {
    return { inbox, admin: await inbox.login() };
  } catch (err) {
    await inbox.stop();
    throw err;
  }
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
  const mediaPort = await freePort();
  const env: Record<string, string> = {
    DATABASE_URL: db.url,
    NATS_URL: testNatsUrl(),
    INSTANCE_ID: uniqueInstanceId('inbox'),
    PUBLIC_URL: url,
    NETWORK_BASE_URL: sandbox.url,
    NETWORK_API_KEY: seed.apiKey,
    WABA_PHONE_NUMBER: seed.displayPhoneNumber,
    WABA_WEBHOOK_SECRET: seed.webhookSecret,
    // One instance secret for every service (chats seals contact provider secrets with it).
    INBOX_SECRET_KEY: TEST_SECRET_KEY,
    ...opts.env,
  };
  const gatewayEnv = {
    PORT: String(port),
    MEDIA_URL: `http://127.0.0.1:${mediaPort}`,
    INBOX_SECRET_KEY: TEST_SECRET_KEY,
    INBOX_ADMIN_USERNAME: ADMIN.username,
    INBOX_ADMIN_PASSWORD: ADMIN.password,
  };
  const fanoutEnv = {
    // The gateway's key: one instance secret for every service.
    INBOX_SECRET_KEY: TEST_SECRET_KEY,
    // Test receivers listen on loopback.
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    WEBHOOK_RETRY_SCHEDULE: '0s,200ms,500ms,1s',
  };
  const mediaEnv = {
    MEDIA_PORT: String(mediaPort),
    // The gateway's key: the media service trusts uploads the gateway signed with it.
    INBOX_SECRET_KEY: TEST_SECRET_KEY,
  };
  const chatsEntry = join(repoRoot, 'services/chats/src/main.ts');
  // Single-process mode reads the union of the three environments (the same variable names).
  const spawnInbox = () =>
    spawnService(join(repoRoot, 'services/inbox/src/main.ts'), {
      ...env,
      ...gatewayEnv,
      ...fanoutEnv,
      ...mediaEnv,
    });
  const single = opts.singleProcess ? spawnInbox() : undefined;
  const gateway =
    single ?? spawnService(join(repoRoot, 'services/gateway/src/main.ts'), { ...env, ...gatewayEnv });
  const inbox: Inbox = {
    url,
    mediaUrl: gatewayEnv.MEDIA_URL,
    sandbox,
    db,
    env,
    gateway,
    chats: single ?? spawnService(chatsEntry, env),
    media: single ?? spawnService(join(repoRoot, 'services/media/src/main.ts'), { ...env, ...mediaEnv }),
    fanout:
      single ??
      (opts.fanout
        ? spawnService(join(repoRoot, 'services/fanout/src/main.ts'), { ...env, ...fanoutEnv })
        : undefined),
    async restartChats() {
      if (opts.singleProcess) {
        const next = spawnInbox();
        inbox.gateway = next;
        inbox.chats = next;
        inbox.fanout = next;
        inbox.media = next;
      } else {
        inbox.chats = spawnService(chatsEntry, env);
      }
    },
    async restartMedia() {
      if (opts.singleProcess) {
        await inbox.restartChats();
        inbox.media = inbox.chats;
      } else {
        inbox.media = spawnService(join(repoRoot, 'services/media/src/main.ts'), { ...env, ...mediaEnv });
      }
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
    networkPost(body, contentType = 'application/json') {
      const signature = createHmac('sha256', seed.webhookSecret).update(body).digest('hex');
      return fetch(`${url}/api/v1/waba/webhook/`, {
        method: 'POST',
        headers: { 'content-type': contentType, 'x-hub-signature-256': `sha256=${signature}` },
        body,
      });
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
      // Each process once (in single-process mode the three fields are one process: a second
      // SIGTERM would make it exit at once).
      const processes = new Set(
        [inbox.gateway, inbox.chats, inbox.fanout, inbox.media].filter((p) => p !== undefined),
      );
      await Promise.all([...processes].map((p) => p.stop()));
      await sandbox.close();
      await db.drop();
    },
  };
  await waitFor(
    async () => (await fetch(`${url}/api/v1/status/health/`)).status === 200,
    30_000,
    () => `gateway health (${gateway.output()})`,
  );
  await waitFor(
    async () => (await fetch(`http://127.0.0.1:${mediaPort}/healthz`).catch(() => undefined))?.status === 200,
    30_000,
    () => `media service (${inbox.media.output()})`,
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
  // The fan-out serves webhook management once it has reconciled its consumers: until then a
  // webhook request would find nobody answering (503).
  const fanout = inbox.fanout;
  if (fanout) {
    const token = await inbox.login();
    await waitFor(
      async () => (await inbox.api('GET', '/api/v1/webhooks/waba/', { token })).status === 200,
      30_000,
      () => `fan-out answering (${fanout.output()})`,
    );
  }
  return inbox;
}
