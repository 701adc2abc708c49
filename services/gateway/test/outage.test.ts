import { connectNats, createDb, createLogger, createMailer, pingDb, pingNats } from '@switchboard/kit';
import { instanceId } from '@switchboard/proto';
import { createBus } from '@switchboard/proto/bus';
import { freePort, testNatsUrl, uniqueInstanceId } from '@switchboard/testkit';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import type { GatewayDatabase } from '../src/store/db.ts';
import { auth } from './helpers.ts';

describe('database outage', () => {
  it('answers 503 service_unavailable naming the database, not 500', async () => {
    // PostgreSQL unreachable: nothing listens on this port.
    const url = `postgres://postgres@127.0.0.1:${await freePort()}/nowhere`;
    const log = createLogger('gateway-test', 'silent');
    const db = createDb<GatewayDatabase>({ url, applicationName: 'gateway-outage-test' });
    const nc = await connectNats(testNatsUrl(), 'gateway-outage-test');
    const bus = await createBus(nc, instanceId(uniqueInstanceId()));
    const config = loadConfig({ DATABASE_URL: url, INBOX_SECRET_KEY: 'test-secret-'.repeat(4) });
    const { app } = await buildApp({
      log,
      bus,
      db,
      config,
      mailer: createMailer(undefined, config.MAIL_FROM, log),
      health: { database: () => pingDb(db), nats: () => pingNats(nc) },
    });
    const res = await app.inject({ url: '/api/v1/users/me/', headers: auth('f'.repeat(40)) });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ code: 'service_unavailable', dependency: 'database' });
    await app.close();
    await db.destroy();
    await nc.drain();
  });
});
