import {
  connectNats,
  createDb,
  createLogger,
  createMailer,
  type NatsConnection,
  pingDb,
  pingNats,
} from '@switchboard/kit';
import { instanceId } from '@switchboard/proto';
import { type Bus, createBus } from '@switchboard/proto/bus';
import { freshDatabase, type TestDatabase, testNatsUrl, uniqueInstanceId } from '@switchboard/testkit';
import type { Kysely } from 'kysely';
import { buildApp, type Gateway } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import type { GatewayDatabase } from '../src/store/db.ts';
import { ensureAdmin } from '../src/use-cases/bootstrap.ts';

export const ADMIN = { username: 'admin@example.com', password: 'correct horse battery' };

export interface TestGateway extends Gateway {
  db: Kysely<GatewayDatabase>;
  bus: Bus;
  nc: NatsConnection;
  databaseUrl: string;
  close(): Promise<void>;
}

/** A gateway on a fresh database and its own NATS namespace, with the first admin created. */
export async function startTestGateway(
  env: Record<string, string> = {},
  opts: { natsUrl?: string } = {},
): Promise<TestGateway> {
  const testDb: TestDatabase = await freshDatabase('gw');
  const log = createLogger('gateway-test', 'silent');
  const db = createDb<GatewayDatabase>({ url: testDb.url, applicationName: 'gateway-test' });
  const nc = await connectNats(opts.natsUrl ?? testNatsUrl(), 'gateway-test');
  const bus = await createBus(nc, instanceId(uniqueInstanceId()));
  await bus.ensureStreams();
  const config = loadConfig({ DATABASE_URL: testDb.url, INBOX_SECRET_KEY: 'test-secret-'.repeat(4), ...env });
  const mailer = createMailer(config.SMTP_URL, config.MAIL_FROM, log);
  const gw = await buildApp({
    log,
    bus,
    db,
    config,
    mailer,
    health: { database: () => pingDb(db), nats: () => pingNats(nc) },
  });
  await ensureAdmin(
    db,
    gw.users,
    {
      adminUsername: undefined,
      adminEmail: ADMIN.username,
      adminPassword: ADMIN.password,
    },
    log,
  );
  await gw.app.ready();
  return {
    ...gw,
    db,
    bus,
    nc,
    databaseUrl: testDb.url,
    async close() {
      await gw.app.close();
      mailer.close();
      await nc.drain();
      await db.destroy();
      await testDb.drop();
    },
  };
}

export async function login(gw: Gateway, username: string, password: string): Promise<string> {
  const res = await gw.app.inject({
    method: 'POST',
    url: '/api/v1/auth/token/',
    payload: { username, password },
  });
  if (res.statusCode !== 200) throw new Error(`login failed: ${res.statusCode} ${res.body}`);
  return res.json().token;
}

export const auth = (token: string) => ({ authorization: `Token ${token}` });

/** One request to the gateway as the user of `token`, with `payload` as its JSON body. */
export function request(
  gw: Gateway,
  token: string,
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
  url: string,
  payload?: object,
) {
  return gw.app.inject({ method, url, headers: auth(token), ...(payload && { payload }) });
}
