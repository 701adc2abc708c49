/**
 * `npm start`: the whole product on this machine with no manual steps. Starts PostgreSQL
 * (embedded, data kept under .switchboard/) unless DATABASE_URL is set, nats-server unless
 * NATS_URL is set, then every service, supervised. Ctrl-C stops everything cleanly.
 * URLs and credentials go to stdout and to .switchboard/local.json.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import {
  freePort,
  NATS_INSTALL_HINT,
  natsServerBinary,
  startEmbeddedPostgres,
  startNatsServer,
  startSmtpSink,
  waitFor,
} from '@switchboard/kit/infra';
import pg from 'pg';
import { z } from 'zod';
import { type Supervised, supervise } from './local/supervisor.ts';

const repoRoot = resolve(import.meta.dirname, '..');
const home = resolve(process.env.SWITCHBOARD_HOME ?? join(repoRoot, '.switchboard'));
const color = process.stdout.isTTY;
const say = (line: string) => process.stdout.write(`${line}\n`);

async function portIsFree(port: number): Promise<boolean> {
  return new Promise((res) => {
    const srv = createServer();
    srv.once('error', () => res(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => res(true)));
  });
}

async function ensureDatabase(adminUrl: string, name: string): Promise<string> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (!rowCount) await client.query(`create database "${name}"`);
  } finally {
    await client.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

const LocalSecrets = z.object({
  inbox_secret_key: z.string().min(32),
  admin: z.object({ username: z.string(), password: z.string() }),
  sandbox: z.object({ api_key: z.string(), webhook_secret: z.string() }),
});
type LocalSecrets = z.infer<typeof LocalSecrets>;

/** Secrets of the local instance, generated on the first run and reused after (0600 file). */
async function localSecrets(): Promise<LocalSecrets> {
  const file = join(home, 'secrets.json');
  const existing = LocalSecrets.safeParse(JSON.parse(await readFile(file, 'utf8').catch(() => 'null')));
  if (existing.success) return existing.data;
  const fresh: LocalSecrets = {
    inbox_secret_key: randomBytes(32).toString('base64url'),
    admin: { username: 'admin', password: randomBytes(12).toString('base64url') },
    sandbox: {
      api_key: `sbx_${randomBytes(18).toString('base64url')}`,
      webhook_secret: `sbxs_${randomBytes(18).toString('base64url')}`,
    },
  };
  await writeFile(file, `${JSON.stringify(fresh, null, 2)}\n`, { mode: 0o600 });
  return fresh;
}

async function main(): Promise<void> {
  await mkdir(home, { recursive: true });
  const cleanups: Array<() => Promise<void>> = [];
  const services: Supervised[] = [];
  let shuttingDown = false;
  const shutdown = async (code: number) => {
    if (shuttingDown) return;
    shuttingDown = true;
    say('\nstopping…');
    await Promise.all(services.map((s) => s.stop()));
    for (const c of cleanups.reverse()) await c().catch((e: unknown) => say(`cleanup failed: ${String(e)}`));
    say('stopped');
    process.exit(code);
  };
  process.on('SIGINT', () => void shutdown(0));
  process.on('SIGTERM', () => void shutdown(0));

  try {
    let databaseUrl = process.env.DATABASE_URL;
    if (!databaseUrl) {
      say(`starting PostgreSQL (data in ${join(home, 'postgres')})`);
      const pgHandle = await startEmbeddedPostgres({ dataDir: join(home, 'postgres') });
      cleanups.push(() => pgHandle.stop());
      databaseUrl = await ensureDatabase(pgHandle.url, 'switchboard_local');
    }

    let natsUrl = process.env.NATS_URL;
    if (!natsUrl) {
      if (!natsServerBinary()) {
        say(NATS_INSTALL_HINT);
        return shutdown(1);
      }
      say(`starting nats-server (store in ${join(home, 'nats')})`);
      const nats = await startNatsServer({ storeDir: join(home, 'nats') });
      cleanups.push(() => nats.stop());
      natsUrl = nats.url;
    }

    const secrets = await localSecrets();
    const mailDir = join(home, 'mail');
    await mkdir(mailDir, { recursive: true });
    // Mail stays on this machine: a loopback SMTP server prints what the inbox sends.
    const smtp = await startSmtpSink({
      onMail: (m) => {
        say(`\n--- mail to ${m.to.join(', ')}: ${m.subject}\n${m.text.trim()}\n---`);
        void writeFile(join(mailDir, `${Date.now()}.eml`), m.raw);
      },
    });
    cleanups.push(() => smtp.close());

    // The network: the sandbox unless NETWORK_BASE_URL and NETWORK_API_KEY point at the provider.
    const realNetwork = process.env.NETWORK_BASE_URL && process.env.NETWORK_API_KEY;
    const sandboxPort = await freePort();
    const sandboxUrl = `http://127.0.0.1:${sandboxPort}`;
    const phoneNumber = process.env.WABA_PHONE_NUMBER ?? '15550001234';
    const network = realNetwork
      ? {
          NETWORK_BASE_URL: process.env.NETWORK_BASE_URL ?? '',
          NETWORK_API_KEY: process.env.NETWORK_API_KEY ?? '',
          WABA_PHONE_NUMBER: phoneNumber,
          ...(process.env.WABA_WEBHOOK_SECRET && { WABA_WEBHOOK_SECRET: process.env.WABA_WEBHOOK_SECRET }),
        }
      : {
          NETWORK_BASE_URL: sandboxUrl,
          NETWORK_API_KEY: secrets.sandbox.api_key,
          WABA_PHONE_NUMBER: phoneNumber,
          WABA_WEBHOOK_SECRET: secrets.sandbox.webhook_secret,
        };
    if (!realNetwork) {
      services.push(
        supervise(
          {
            name: 'sandbox',
            entry: join(repoRoot, 'services/sandbox/src/main.ts'),
            env: {
              PORT: String(sandboxPort),
              SANDBOX_PUBLIC_URL: sandboxUrl,
              SANDBOX_SEED_DISPLAY_PHONE_NUMBER: phoneNumber,
              SANDBOX_SEED_API_KEY: secrets.sandbox.api_key,
              SANDBOX_SEED_WEBHOOK_SECRET: secrets.sandbox.webhook_secret,
              // The inbox follows the spec: a template opens a new care window.
              SANDBOX_TEMPLATE_OPENS_WINDOW: 'true',
            },
          },
          color,
        ),
      );
      await waitFor(async () => (await fetch(`${sandboxUrl}/sandbox/health`)).ok, 30_000, 'the sandbox');
    }

    const wanted = Number(process.env.INBOX_PORT ?? 8000);
    const inboxPort = (await portIsFree(wanted)) ? wanted : await freePort();
    if (inboxPort !== wanted) say(`port ${wanted} is taken; the inbox uses ${inboxPort}`);
    const inboxUrl = `http://127.0.0.1:${inboxPort}`;
    const instanceId = process.env.INSTANCE_ID ?? 'local';
    const common = {
      DATABASE_URL: databaseUrl,
      NATS_URL: natsUrl,
      INSTANCE_ID: instanceId,
      PUBLIC_URL: inboxUrl,
      ...network,
    };

    services.push(
      supervise(
        {
          name: 'gateway',
          entry: join(repoRoot, 'services/gateway/src/main.ts'),
          env: {
            ...common,
            PORT: String(inboxPort),
            INBOX_SECRET_KEY: secrets.inbox_secret_key,
            INBOX_ADMIN_USERNAME: secrets.admin.username,
            INBOX_ADMIN_PASSWORD: secrets.admin.password,
            SMTP_URL: smtp.url,
          },
        },
        color,
      ),
      supervise({ name: 'chats', entry: join(repoRoot, 'services/chats/src/main.ts'), env: common }, color),
      supervise(
        {
          name: 'fanout',
          entry: join(repoRoot, 'services/fanout/src/main.ts'),
          // Local webhook receivers usually listen on this machine.
          env: {
            ...common,
            WEBHOOK_ALLOW_PRIVATE_TARGETS: process.env.WEBHOOK_ALLOW_PRIVATE_TARGETS ?? 'true',
          },
        },
        color,
      ),
    );

    await waitFor(
      async () => (await fetch(`${inboxUrl}/api/v1/status/health/`)).status === 200,
      60_000,
      'the inbox health endpoint',
    );
    const local = {
      inbox: { url: inboxUrl, admin: secrets.admin },
      database_url: databaseUrl,
      nats_url: natsUrl,
      smtp_url: smtp.url,
      ...(!realNetwork && {
        sandbox: { url: sandboxUrl, phone_number: phoneNumber, api_key: secrets.sandbox.api_key },
      }),
    };
    await writeFile(join(home, 'local.json'), `${JSON.stringify(local, null, 2)}\n`, { mode: 0o600 });
    say('');
    say(`Switchboard is running (instance "${instanceId}")`);
    say(`  inbox API    ${inboxUrl}/api/v1/`);
    say(`  API docs     ${inboxUrl}/api/v1/docs/`);
    say(`  health       ${inboxUrl}/api/v1/status/health/`);
    say(`  admin        ${secrets.admin.username} / ${secrets.admin.password}  (initial password)`);
    say(`  mail         ${smtp.url} (mails are printed here and kept in ${mailDir})`);
    if (!realNetwork) say(`  sandbox      ${sandboxUrl}/sandbox/docs  (the network; number ${phoneNumber})`);
    say(`  database     ${databaseUrl}`);
    say(`  nats         ${natsUrl}`);
    say(`  details in   ${join(home, 'local.json')}`);
    say('Press Ctrl-C to stop.');
  } catch (err) {
    say(`start failed: ${err instanceof Error ? err.message : String(err)}`);
    await shutdown(1);
  }
}

await main();
