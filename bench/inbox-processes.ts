/**
 * One bench instance of the inbox on the given NATS, database and sandbox: the start-up every
 * inbox bench shares. Two shapes, both as deployed: the gateway and chats as their own
 * processes (`processes`, the default), or the whole inbox in one process (`one-process`:
 * `services/inbox`, as the local runtime runs each instance and small deployments run it).
 */
import { join } from 'node:path';
import type { SandboxHandle } from '@switchboard/sandbox';
import {
  freePort,
  repoRoot,
  type ServiceProcess,
  spawnService,
  uniqueInstanceId,
  waitFor,
} from '@switchboard/testkit/tools';

export const BENCH_ADMIN = { username: 'bench', password: 'a long quiet passphrase 1' } as const;

export const INBOX_SHAPES = ['processes', 'one-process'] as const;
export type InboxShape = (typeof INBOX_SHAPES)[number];

export interface BenchInbox {
  readonly url: string;
  readonly instance: string;
  readonly shape: InboxShape;
  /** The inbox's processes by name: `gateway` and `chats`, or `inbox`. */
  readonly processes: Readonly<Record<string, ServiceProcess>>;
  /** Signs the bench admin in and answers its token. */
  login(): Promise<string>;
  stop(): Promise<void>;
}

export async function startBenchInbox(opts: {
  natsUrl: string;
  databaseUrl: string;
  sandbox: SandboxHandle;
  /**
   * Extra environment of each process (e.g. NODE_OPTIONS for profiles, OTEL_* for traces); in
   * the one-process shape the process gets `both` and then `gateway`.
   */
  env?: { gateway?: Record<string, string>; chats?: Record<string, string>; both?: Record<string, string> };
  shape?: InboxShape;
}): Promise<BenchInbox> {
  const shape = opts.shape ?? 'processes';
  const seed = opts.sandbox.seed;
  if (!seed) throw new Error('no sandbox seed');
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const instance = uniqueInstanceId('bench');
  const env = {
    DATABASE_URL: opts.databaseUrl,
    NATS_URL: opts.natsUrl,
    // Its own subjects and streams, also on a NATS given by NATS_URL.
    INSTANCE_ID: instance,
    PUBLIC_URL: url,
    NETWORK_BASE_URL: opts.sandbox.url,
    NETWORK_API_KEY: seed.apiKey,
    WABA_PHONE_NUMBER: seed.displayPhoneNumber,
    WABA_WEBHOOK_SECRET: seed.webhookSecret,
    // The services' default: the bench pays for the logging production pays for.
    LOG_LEVEL: 'info',
    ...opts.env?.both,
  };
  const gatewayEnv = {
    ...env,
    PORT: String(port),
    INBOX_SECRET_KEY: 'bench-secret-key-0123456789abcdef0123',
    INBOX_ADMIN_USERNAME: BENCH_ADMIN.username,
    INBOX_ADMIN_PASSWORD: BENCH_ADMIN.password,
    AUTH_MAX_FAILURES_PER_ADDRESS: '1000',
    ...opts.env?.gateway,
  };
  const processes: Record<string, ServiceProcess> =
    shape === 'one-process'
      ? { inbox: spawnService(join(repoRoot, 'services/inbox/src/main.ts'), gatewayEnv) }
      : {
          gateway: spawnService(join(repoRoot, 'services/gateway/src/main.ts'), gatewayEnv),
          chats: spawnService(join(repoRoot, 'services/chats/src/main.ts'), { ...env, ...opts.env?.chats }),
        };
  await waitFor(
    async () => (await fetch(`${url}/api/v1/status/health/`).catch(() => null))?.status === 200,
    60_000,
    () =>
      Object.entries(processes)
        .map(([name, p]) => `${name}: ${p.output()}`)
        .join('\n'),
  );
  return {
    url,
    instance,
    shape,
    processes,
    async login() {
      const res = await fetch(`${url}/api/v1/auth/token/`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(BENCH_ADMIN),
      });
      if (!res.ok) throw new Error(`bench login: ${res.status}`);
      return ((await res.json()) as { token: string }).token;
    },
    async stop() {
      await Promise.all(Object.values(processes).map((p) => p.stop()));
    },
  };
}
