import { randomBytes } from 'node:crypto';
import { createSecretBox, generateSecret, migrate } from '@switchboard/kit';
import { fanoutRpc, type NetworkEvent } from '@switchboard/proto';
import {
  admin,
  type ReceivedRequest,
  type Receiver,
  receivedWebhookHeaders,
  waitFor,
} from '@switchboard/testkit';
import { type Kysely, sql } from 'kysely';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkSecretsKey, createWebhookSecretsBox, openWebhook } from '../src/adapters/sealing.ts';
import type { FanoutDatabase } from '../src/db.ts';
import { m0001Webhooks } from '../src/migrations/0001_webhooks.ts';
import { fanoutMigrations } from '../src/migrations/index.ts';
import {
  closingReceivers,
  type Harness,
  publishEvent,
  startHarness,
  TEST_SECRET_KEY,
  testBox,
  testSettings,
} from './helpers.ts';

const harnesses: Harness[] = [];
const receiver = closingReceivers();

afterAll(async () => {
  for (const h of harnesses) await h.stop();
});

function verifies(secret: string, got: ReceivedRequest): boolean {
  try {
    new StandardWebhook(secret).verify(got.body, receivedWebhookHeaders(got));
    return true;
  } catch {
    return false;
  }
}

async function deliveredOnce(r: Receiver, event: NetworkEvent): Promise<ReceivedRequest> {
  await waitFor(async () => r.forEvent(event.event_id).length === 1, 10_000, 'delivery');
  const [got] = r.forEvent(event.event_id);
  if (!got) throw new Error('no delivery');
  return got;
}

/** Every row of every table in the database, each as PostgreSQL's text form of the row. */
async function everyRow(db: Kysely<FanoutDatabase>): Promise<Map<string, string[]>> {
  const tables = await sql<{ schema: string; name: string }>`
    select table_schema as schema, table_name as name from information_schema.tables
    where table_type = 'BASE TABLE' and table_schema not in ('pg_catalog', 'information_schema')
  `.execute(db);
  const out = new Map<string, string[]>();
  for (const t of tables.rows) {
    const rows = await sql<{
      row: string;
    }>`select r::text as row from ${sql.table(`${t.schema}.${t.name}`)} r`.execute(db);
    out.set(
      `${t.schema}.${t.name}`,
      rows.rows.map((r) => r.row),
    );
  }
  return out;
}

/** The spellings a stored plaintext value could take in a row's text: as is, bytea hex, and for secrets the key. */
function spellings(value: string): string[] {
  const list = [value, Buffer.from(value, 'utf8').toString('hex')];
  if (value.startsWith('whsec_')) {
    const body = value.slice('whsec_'.length);
    list.push(body, Buffer.from(body, 'base64').toString('hex'));
  }
  return list;
}

function expectNowhere(rows: Map<string, string[]>, values: string[]): void {
  const needles = values.flatMap(spellings).map((n) => n.toLowerCase());
  const found: string[] = [];
  for (const [table, texts] of rows) {
    for (const text of texts) {
      const lower = text.toLowerCase();
      for (const n of needles) if (lower.includes(n)) found.push(`${table}: ${n}`);
    }
  }
  expect(found).toEqual([]);
}

describe('the secret box (kit)', () => {
  const key = 'k'.repeat(40);

  it('seals with a fresh IV and opens only under the same key and purpose, untampered', () => {
    const box = createSecretBox(key, 'purpose-a');
    const a = box.seal('whsec_value');
    expect(box.open(a)).toBe('whsec_value');
    expect(box.seal('whsec_value').equals(a)).toBe(false);
    expect(() => createSecretBox(key, 'purpose-b').open(a)).toThrow();
    expect(() => createSecretBox('j'.repeat(40), 'purpose-a').open(a)).toThrow();
    const tampered = Buffer.from(a);
    tampered[tampered.length - 1] = (tampered.at(-1) ?? 0) ^ 1;
    expect(() => box.open(tampered)).toThrow();
    expect(() => box.open(a.subarray(0, 20))).toThrow();
    expect(() => createSecretBox('short', 'purpose-a')).toThrow(/32 characters/);
  });
});

describe('webhook secrets at rest', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(testSettings({ retry: { ...testSettings().retry, schedule: [0, 50] } }));
    harnesses.push(h);
  });

  it('stores no secret or header value readably, and still signs and sends them', async () => {
    const r = await receiver();
    const failing = await receiver(() => ({ status: 500 }));
    const secret = generateSecret();
    const headers = {
      Authorization: `Bearer ${randomBytes(18).toString('base64url')}`,
      'X-Api-Key': randomBytes(12).toString('hex'),
    };
    const hook = await h.bus.request(fanoutRpc.create, { principal: admin, url: r.url, headers, secret });
    expect(hook.secret).toBe(secret);
    // A second webhook that gives up, so the dead letters and attempts hold rows too.
    await h.bus.request(fanoutRpc.create, { principal: admin, url: failing.url, headers, secret });

    const first = await publishEvent(h.bus);
    const got = await deliveredOnce(r, first);
    expect(verifies(secret, got)).toBe(true);
    expect(got.headers.authorization).toBe(headers.Authorization);
    expect(got.headers['x-api-key']).toBe(headers['X-Api-Key']);
    await waitFor(
      async () =>
        Number(
          (
            await h.db
              .selectFrom('webhook_dead_letters')
              .select((eb) => eb.fn.countAll<number>().as('n'))
              .executeTakeFirstOrThrow()
          ).n,
        ) > 0,
      10_000,
      'dead letter of the failing webhook',
    );

    const rotated = await h.bus.request(fanoutRpc.rotateSecret, { principal: admin, id: hook.id });
    const second = await publishEvent(h.bus);
    const afterRotation = await deliveredOnce(r, second);
    expect(String(afterRotation.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verifies(rotated.secret, afterRotation)).toBe(true);
    expect(verifies(secret, afterRotation)).toBe(true);
    expect(verifies(generateSecret(), afterRotation)).toBe(false);

    // The API still shows the headers; only the table is sealed.
    expect((await h.bus.request(fanoutRpc.get, { principal: admin, id: hook.id })).headers).toEqual(headers);
    await h.bus.request(fanoutRpc.deliveries, { principal: admin, id: hook.id, limit: 10, offset: 0 });

    const rows = await everyRow(h.db);
    expect(rows.get('public.webhooks')).toHaveLength(2);
    expect(rows.get('public.webhook_attempts')?.length).toBeGreaterThan(2);
    expect(rows.get('public.webhook_dead_letters')?.length).toBeGreaterThan(0);
    expectNowhere(rows, [secret, rotated.secret, ...Object.values(headers)]);

    const stored = await h.db
      .selectFrom('webhooks')
      .selectAll()
      .where('id', '=', hook.id)
      .executeTakeFirstOrThrow();
    expect(openWebhook(testBox, stored)).toMatchObject({
      secret: rotated.secret,
      previous_secret: secret,
      headers,
    });
  });

  it('refuses to start with a key that does not open the stored secrets', async () => {
    await h.createWebhook('https://example.com/key-check');
    await expect(checkSecretsKey(h.db, testBox)).resolves.toBeUndefined();
    await expect(checkSecretsKey(h.db, createWebhookSecretsBox(`other-${TEST_SECRET_KEY}`))).rejects.toThrow(
      /INBOX_SECRET_KEY does not open the stored webhook secrets/,
    );
  });
});

describe('migrating plaintext webhooks', () => {
  it('seals existing rows, which keep signing and sending their headers', async () => {
    const r = await receiver();
    const current = generateSecret();
    const previous = generateSecret();
    const headers = { Authorization: `Bearer legacy-${randomBytes(8).toString('hex')}` };
    let legacyId = '';

    const h = await startHarness(testSettings(), {
      // The schema as the first release left it, with one webhook in the middle of a rotation.
      async beforeMigrate(db) {
        await sql`drop table fanout_outbox, webhook_dead_letters, webhook_attempts, webhooks`.execute(db);
        await sql`delete from fanout_migrations`.execute(db);
        await migrate(db, 'fanout', [m0001Webhooks]);
        const inserted = await sql<{ id: string }>`
          insert into webhooks (owner_user_id, url, headers, secret, previous_secret, previous_secret_expires_at)
          values (${admin.user_id}, ${r.url}, ${JSON.stringify(headers)}::jsonb, ${current}, ${previous},
                  now() + interval '1 hour')
          returning id
        `.execute(db);
        legacyId = inserted.rows[0]?.id ?? '';

        // Without the key the migration refuses, and its transaction leaves everything as it was.
        await expect(migrate(db, 'fanout', fanoutMigrations)).rejects.toThrow(/INBOX_SECRET_KEY/);
        const plain = await sql<{ secret: string }>`select secret from webhooks`.execute(db);
        expect(plain.rows).toEqual([{ secret: current }]);
      },
    });
    harnesses.push(h);

    const columns = await sql<{ name: string }>`
      select column_name as name from information_schema.columns where table_name = 'webhooks'
    `.execute(h.db);
    expect(columns.rows.map((c) => c.name)).not.toEqual(expect.arrayContaining(['secret']));
    expect(columns.rows.map((c) => c.name)).toEqual(
      expect.arrayContaining(['sealed_secret', 'sealed_previous_secret', 'sealed_headers']),
    );
    expectNowhere(await everyRow(h.db), [current, previous, ...Object.values(headers)]);

    await waitFor(
      async () => h.fanout.supervisor.running().includes(legacyId),
      10_000,
      'legacy webhook running',
    );
    const event = await publishEvent(h.bus);
    const got = await deliveredOnce(r, event);
    expect(verifies(current, got)).toBe(true);
    expect(verifies(previous, got)).toBe(true);
    expect(got.headers.authorization).toBe(headers.Authorization);
    expect((await h.bus.request(fanoutRpc.get, { principal: admin, id: legacyId })).headers).toEqual(headers);
  });
});
