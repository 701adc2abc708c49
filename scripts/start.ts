/**
 * `npm start`: the whole product on this machine with no manual steps. Starts PostgreSQL
 * (embedded, data kept under .switchboard/) unless DATABASE_URL is set, nats-server unless
 * NATS_URL is set, then every service; all of them supervised (restarted when they die).
 * Ctrl-C stops the services, then NATS, then PostgreSQL.
 * URLs and credentials go to stdout and to .switchboard/local.json.
 */
// First: an unsuitable Node.js stops here with one sentence.
import './local/node-version.ts';
import { createECDH, randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { connect, createServer } from 'node:net';
import { join, resolve } from 'node:path';
import {
  freePort,
  type LocalInfra,
  natsMissingMessage,
  natsServerBinary,
  StartupError,
  startLocalInfra,
  startSmtpSink,
  waitFor,
} from '@switchboard/testkit/infra';
import pg from 'pg';
import { z } from 'zod';
import { oneLine, redactUrl } from './local/failures.ts';
import { startPartnerStack } from './local/partner.ts';
import { launchService, type ServiceSpec, type Supervised, supervise } from './local/supervisor.ts';

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
  /** The inbox's Web Push (VAPID) key pair; added to files written before it existed. */
  vapid: z.object({ public_key: z.string(), private_key: z.string() }).optional(),
});
type LocalSecrets = z.infer<typeof LocalSecrets> & { vapid: { public_key: string; private_key: string } };

/** A P-256 key pair as Web Push wants it (RFC 8292): base64url, public key uncompressed. */
function vapidKeys(): { public_key: string; private_key: string } {
  const ecdh = createECDH('prime256v1');
  ecdh.generateKeys();
  return {
    public_key: ecdh.getPublicKey().toString('base64url'),
    private_key: ecdh.getPrivateKey().toString('base64url'),
  };
}

/** Secrets of the local instance, generated on the first run and reused after (0600 file). */
async function localSecrets(): Promise<LocalSecrets> {
  const file = join(home, 'secrets.json');
  const existing = LocalSecrets.safeParse(JSON.parse(await readFile(file, 'utf8').catch(() => 'null')));
  if (existing.success && existing.data.vapid) return { ...existing.data, vapid: existing.data.vapid };
  if (existing.success) {
    const completed = { ...existing.data, vapid: vapidKeys() };
    await writeFile(file, `${JSON.stringify(completed, null, 2)}\n`, { mode: 0o600 });
    return completed;
  }
  const fresh: LocalSecrets = {
    inbox_secret_key: randomBytes(32).toString('base64url'),
    admin: { username: 'admin', password: randomBytes(12).toString('base64url') },
    sandbox: {
      api_key: `sbx_${randomBytes(18).toString('base64url')}`,
      webhook_secret: `sbxs_${randomBytes(18).toString('base64url')}`,
    },
    vapid: vapidKeys(),
  };
  await writeFile(file, `${JSON.stringify(fresh, null, 2)}\n`, { mode: 0o600 });
  return fresh;
}

/** True when something answers TCP on host:port within the timeout. */
function tcpReachable(host: string, port: number, timeoutMs = 5_000): Promise<boolean> {
  return new Promise((res) => {
    const socket = connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      res(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** A DATABASE_URL that does not answer would only show up later as services restarting forever. */
async function checkDatabaseUrl(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('select 1');
  } catch (err) {
    throw new StartupError(
      `Cannot use the PostgreSQL at ${redactUrl(url)} (DATABASE_URL): ${oneLine(err).replace(/\.$/, '')}; start that server or correct DATABASE_URL, or unset DATABASE_URL to use the embedded PostgreSQL.`,
    );
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function checkNatsUrl(urls: string): Promise<void> {
  for (const raw of urls.split(',').map((s) => s.trim())) {
    let host = '';
    let port = 4222;
    try {
      const u = new URL(raw.includes('://') ? raw : `nats://${raw}`);
      host = u.hostname;
      port = Number(u.port || 4222);
    } catch {
      throw new StartupError(`NATS_URL is not a valid URL (${raw}); use nats://host:port, or unset it.`);
    }
    if (await tcpReachable(host, port)) return;
  }
  throw new StartupError(
    `Cannot reach NATS at ${urls} (NATS_URL); start that server or correct NATS_URL, or unset NATS_URL to let npm start run its own nats-server.`,
  );
}

async function main(): Promise<void> {
  const services: Supervised[] = [];
  let infra: LocalInfra | undefined;
  const cleanups: Array<() => Promise<void>> = [];
  let shuttingDown = false;
  const shutdown = async (code: number) => {
    if (shuttingDown) return;
    shuttingDown = true;
    const running = services.length > 0 || infra !== undefined;
    if (running) say('\nstopping…');
    // In dependency order: services finish their in-flight work while NATS and PostgreSQL
    // still answer; then NATS, then PostgreSQL, last.
    await Promise.all(services.map((s) => s.stop()));
    await infra?.stop();
    for (const c of cleanups.reverse()) await c().catch((e: unknown) => say(`cleanup failed: ${oneLine(e)}`));
    if (running) say('stopped');
    process.exit(code);
  };
  // Children run in process groups of their own, so these reach only this supervisor.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => void shutdown(0));
  // The last line of defence against a stack trace: one sentence, then an orderly stop.
  let up = false;
  const fail = (err: unknown) => {
    say(
      `${shuttingDown ? 'error while stopping' : up ? 'supervisor failed' : 'start failed'}: ${oneLine(err)}`,
    );
    void shutdown(1);
  };
  process.on('uncaughtException', fail);
  process.on('unhandledRejection', fail);

  try {
    await mkdir(home, { recursive: true });
    // Checked before anything starts, so a missing piece costs nothing to find out.
    if (!process.env.NATS_URL && !natsServerBinary()) throw new StartupError(natsMissingMessage());
    if (process.env.NATS_URL) await checkNatsUrl(process.env.NATS_URL);
    if (process.env.DATABASE_URL) await checkDatabaseUrl(process.env.DATABASE_URL);
    const wanted = Number(process.env.INBOX_PORT ?? 8000);
    if (!Number.isInteger(wanted) || wanted < 1 || wanted > 65_535) {
      throw new StartupError(`INBOX_PORT must be a port number (1-65535), not "${process.env.INBOX_PORT}".`);
    }
    const inboxPortFree = await portIsFree(wanted);
    if (!inboxPortFree && process.env.INBOX_PORT) {
      throw new StartupError(
        `Port ${wanted} (INBOX_PORT) is taken by another program; stop it, or set INBOX_PORT to a free port (or leave it unset to get one).`,
      );
    }

    // PostgreSQL (embedded, data kept in the home) unless DATABASE_URL is set, nats-server unless
    // NATS_URL is set; each supervised: started again on the same port and data when it dies.
    infra = await startLocalInfra({
      dir: home,
      say,
      run: (name, start) => supervise(name, start, say),
    });
    const databaseUrl = infra.postgres
      ? await ensureDatabase(infra.databaseUrl, 'switchboard_local')
      : infra.databaseUrl;
    const natsUrl = infra.natsUrl;

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
      const sandbox: ServiceSpec = {
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
      };
      services.push(await supervise(sandbox.name, launchService(sandbox, color), say));
      await waitFor(async () => (await fetch(`${sandboxUrl}/sandbox/health`)).ok, 30_000, 'the sandbox');
    }

    const inboxPort = inboxPortFree ? wanted : await freePort();
    if (inboxPort !== wanted) say(`port ${wanted} is taken; the inbox uses ${inboxPort}`);
    const inboxUrl = `http://127.0.0.1:${inboxPort}`;
    // The media service listens on loopback only; the gateway passes media/ to it.
    const mediaPort = await freePort();
    const mediaUrl = `http://127.0.0.1:${mediaPort}`;
    const instanceId = process.env.INSTANCE_ID ?? 'local';
    const common = {
      DATABASE_URL: databaseUrl,
      NATS_URL: natsUrl,
      INSTANCE_ID: instanceId,
      // The address the network can reach: given for the real provider, the local one otherwise.
      PUBLIC_URL: process.env.PUBLIC_URL ?? inboxUrl,
      ...network,
    };

    const specs: ServiceSpec[] = [
      {
        name: 'gateway',
        entry: join(repoRoot, 'services/gateway/src/main.ts'),
        env: {
          ...common,
          PORT: String(inboxPort),
          INBOX_SECRET_KEY: secrets.inbox_secret_key,
          INBOX_ADMIN_USERNAME: secrets.admin.username,
          INBOX_ADMIN_PASSWORD: secrets.admin.password,
          // Web Push to browsers of this machine's users.
          VAPID_PUBLIC_KEY: secrets.vapid.public_key,
          VAPID_PRIVATE_KEY: secrets.vapid.private_key,
          SMTP_URL: smtp.url,
          MEDIA_URL: mediaUrl,
        },
      },
      {
        name: 'media',
        entry: join(repoRoot, 'services/media/src/main.ts'),
        // --expose-gc, as deployed: transfers collect their young garbage every 8 MB (services/media/README.md, Memory).
        nodeArgs: ['--expose-gc'],
        // Media uploads carry the gateway's signature under a key derived from the instance secret.
        env: { ...common, MEDIA_PORT: String(mediaPort), INBOX_SECRET_KEY: secrets.inbox_secret_key },
      },
      {
        name: 'chats',
        entry: join(repoRoot, 'services/chats/src/main.ts'),
        // Chats seals contact provider secrets with a key derived from the instance secret.
        env: { ...common, INBOX_SECRET_KEY: secrets.inbox_secret_key },
      },
      {
        name: 'fanout',
        entry: join(repoRoot, 'services/fanout/src/main.ts'),
        // Local webhook receivers usually listen on this machine.
        env: {
          ...common,
          // Fanout seals webhook secrets with a key derived from the instance secret.
          INBOX_SECRET_KEY: secrets.inbox_secret_key,
          WEBHOOK_ALLOW_PRIVATE_TARGETS: process.env.WEBHOOK_ALLOW_PRIVATE_TARGETS ?? 'true',
        },
      },
    ];
    for (const spec of specs) services.push(await supervise(spec.name, launchService(spec, color), say));

    await waitFor(
      async () => (await fetch(`${inboxUrl}/api/v1/status/health/`)).status === 200,
      60_000,
      'the inbox health endpoint',
    );
    // Partner provisioning: the provisioner (instances behind its edge) and the partner API.
    const partner = await startPartnerStack({
      repoRoot,
      home,
      databaseAdminUrl: infra.databaseUrl,
      databaseUrl: infra.postgres
        ? await ensureDatabase(infra.databaseUrl, 'switchboard_provisioning')
        : databaseUrl,
      natsUrl,
      networkUrl: network.NETWORK_BASE_URL,
      smtpUrl: smtp.url,
      color,
      say,
    });
    services.push(...partner.services);
    const local = {
      inbox: { url: inboxUrl, admin: secrets.admin },
      partner: partner.local,
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
    say(
      `  partner API  ${partner.local.url}/docs  (demo partner ${partner.local.partner_id}, key in local.json)`,
    );
    say(`  instances    ${partner.local.edge.replace('//', '//<subdomain>.')}`);
    say(`  database     ${databaseUrl}`);
    say(`  nats         ${natsUrl}`);
    say(`  details in   ${join(home, 'local.json')}`);
    say('Press Ctrl-C to stop.');
    up = true;
  } catch (err) {
    if (shuttingDown) return;
    say(`start failed: ${oneLine(err)}`);
    await shutdown(1);
  }
}

await main();
