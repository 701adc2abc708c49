import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '@switchboard/kit';
import { repoRoot, type ServiceProcess, spawnService, waitFor } from '@switchboard/kit/testing';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';

const LocalJson = z.object({
  inbox: z.object({ url: z.url(), admin: z.object({ username: z.string(), password: z.string() }) }),
  database_url: z.string(),
  nats_url: z.string(),
  sandbox: z.object({ url: z.url(), phone_number: z.string(), api_key: z.string() }),
});

let home: string;
let current: ServiceProcess | undefined;
afterAll(async () => {
  await current?.stop('SIGINT', 30_000);
  await rm(home, { recursive: true, force: true });
});

async function startProduct(port: number): Promise<z.infer<typeof LocalJson>> {
  await rm(join(home, 'local.json'), { force: true });
  // Without DATABASE_URL and NATS_URL, `npm start` brings its own PostgreSQL and NATS.
  const env: Record<string, string> = { SWITCHBOARD_HOME: home, INBOX_PORT: String(port) };
  const child = spawnService(join(repoRoot, 'scripts/start.ts'), { ...env, DATABASE_URL: '', NATS_URL: '' });
  current = child;
  await waitFor(
    async () =>
      LocalJson.safeParse(JSON.parse(await readFile(join(home, 'local.json'), 'utf8').catch(() => 'null')))
        .success,
    60_000,
    () => `local.json (${child.output()})`,
  );
  return LocalJson.parse(JSON.parse(await readFile(join(home, 'local.json'), 'utf8')));
}

async function storedWebhooks(databaseUrl: string): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: number }>('select count(*)::int as n from network_webhooks');
    return rows[0]?.n ?? 0;
  } finally {
    await client.end();
  }
}

describe('npm start', () => {
  it('runs the product with embedded PostgreSQL and NATS, stops cleanly, and keeps its data', async () => {
    home = await mkdtemp(join(tmpdir(), 'switchboard-home-'));
    await chmod(home, 0o755);
    const port = await freePort();

    const first = await startProduct(port);
    // The local network is the sandbox, and chats registered the inbox's webhook with it.
    await waitFor(
      async () =>
        JSON.stringify(await (await fetch(`${first.sandbox.url}/sandbox/numbers`)).json()).includes(
          `${first.inbox.url}/api/v1/waba/webhook/`,
        ),
      20_000,
      'webhook registration',
    );
    expect(first.inbox.url).toBe(`http://127.0.0.1:${port}`);
    const health = await fetch(`${first.inbox.url}/api/v1/status/health/`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });

    // A customer writes through the local network (the sandbox), which posts the signed webhook.
    const posted = await fetch(`${first.sandbox.url}/sandbox/customers/491711111111/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'text', text: { body: 'hello from the start test' } }),
    });
    expect(posted.status).toBeLessThan(300);
    await waitFor(async () => (await storedWebhooks(first.database_url)) === 1, 20_000, 'webhook stored');

    // The printed admin credentials work.
    const token = await fetch(`${first.inbox.url}/api/v1/auth/token/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(first.inbox.admin),
    });
    expect(token.status).toBe(200);
    const { token: adminToken } = z.object({ token: z.string() }).parse(await token.json());

    expect(await current?.stop('SIGINT', 30_000)).toBe(0);

    const second = await startProduct(port);
    expect((await fetch(`${second.inbox.url}/api/v1/status/health/`)).status).toBe(200);
    expect(await storedWebhooks(second.database_url)).toBe(1);
    // Same admin, same token: the secret key and the database survived the restart.
    expect(second.inbox.admin).toEqual(first.inbox.admin);
    const me = await fetch(`${second.inbox.url}/api/v1/users/me/`, {
      headers: { authorization: `Token ${adminToken}` },
    });
    expect(me.status, await me.clone().text()).toBe(200);
    expect(await current?.stop('SIGINT', 30_000)).toBe(0);
    current = undefined;
  });
});
