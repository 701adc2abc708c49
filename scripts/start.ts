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

    const wanted = Number(process.env.INBOX_PORT ?? 8000);
    const inboxPort = (await portIsFree(wanted)) ? wanted : await freePort();
    if (inboxPort !== wanted) say(`port ${wanted} is taken; the inbox uses ${inboxPort}`);
    const inboxUrl = `http://127.0.0.1:${inboxPort}`;
    const instanceId = process.env.INSTANCE_ID ?? 'local';
    const common = { DATABASE_URL: databaseUrl, NATS_URL: natsUrl, INSTANCE_ID: instanceId };

    services.push(
      supervise(
        {
          name: 'gateway',
          entry: join(repoRoot, 'services/gateway/src/main.ts'),
          env: {
            ...common,
            PORT: String(inboxPort),
            PUBLIC_URL: inboxUrl,
            INBOX_SECRET_KEY: secrets.inbox_secret_key,
            INBOX_ADMIN_USERNAME: secrets.admin.username,
            INBOX_ADMIN_PASSWORD: secrets.admin.password,
            SMTP_URL: smtp.url,
          },
        },
        color,
      ),
      supervise({ name: 'chats', entry: join(repoRoot, 'services/chats/src/main.ts'), env: common }, color),
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
    };
    await writeFile(join(home, 'local.json'), `${JSON.stringify(local, null, 2)}\n`, { mode: 0o600 });
    say('');
    say(`Switchboard is running (instance "${instanceId}")`);
    say(`  inbox API    ${inboxUrl}/api/v1/`);
    say(`  API docs     ${inboxUrl}/api/v1/docs/`);
    say(`  health       ${inboxUrl}/api/v1/status/health/`);
    say(`  admin        ${secrets.admin.username} / ${secrets.admin.password}  (initial password)`);
    say(`  mail         ${smtp.url} (mails are printed here and kept in ${mailDir})`);
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
