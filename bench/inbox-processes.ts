/**
 * The gateway and chats of one bench instance as their own processes, as deployed, on the
 * given NATS, database and sandbox: the start-up every inbox bench shares.
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

export interface BenchInbox {
  readonly url: string;
  readonly instance: string;
  readonly gateway: ServiceProcess;
  readonly chats: ServiceProcess;
  /** Signs the bench admin in and answers its token. */
  login(): Promise<string>;
  stop(): Promise<void>;
}

export async function startBenchInbox(opts: {
  natsUrl: string;
  databaseUrl: string;
  sandbox: SandboxHandle;
  /** Extra environment of each process (e.g. NODE_OPTIONS for profiles, OTEL_* for traces). */
  env?: { gateway?: Record<string, string>; chats?: Record<string, string>; both?: Record<string, string> };
}): Promise<BenchInbox> {
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
  const gateway = spawnService(join(repoRoot, 'services/gateway/src/main.ts'), {
    ...env,
    PORT: String(port),
    INBOX_SECRET_KEY: 'bench-secret-key-0123456789abcdef0123',
    INBOX_ADMIN_USERNAME: BENCH_ADMIN.username,
    INBOX_ADMIN_PASSWORD: BENCH_ADMIN.password,
    AUTH_MAX_FAILURES_PER_ADDRESS: '1000',
    ...opts.env?.gateway,
  });
  const chats = spawnService(join(repoRoot, 'services/chats/src/main.ts'), { ...env, ...opts.env?.chats });
  await waitFor(
    async () => (await fetch(`${url}/api/v1/status/health/`).catch(() => null))?.status === 200,
    60_000,
    () => gateway.output(),
  );
  return {
    url,
    instance,
    gateway,
    chats,
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
      await Promise.all([gateway.stop(), chats.stop()]);
    },
  };
}
