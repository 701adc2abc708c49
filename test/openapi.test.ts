import { validate } from '@readme/openapi-parser';
import { buildApp, createMailer, type GatewayDatabase } from '@switchboard/gateway';
import { loadConfig } from '@switchboard/gateway/config';
import { connectNats, createDb, createLogger, type NatsConnection } from '@switchboard/kit';
import { astToString, openapiTS } from '@switchboard/openapi-gen';
import { createBus, instanceId } from '@switchboard/proto';
import { type SandboxHandle, startSandbox } from '@switchboard/sandbox';
import { freshDatabase, type TestDatabase, testNatsUrl, uniqueInstanceId } from '@switchboard/testkit';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * Both OpenAPI documents are what a client generator is given: a standard validator accepts
 * them, every `$ref` resolves, and openapi-typescript turns them into a typed client.
 */

type Document = Record<string, unknown> & { paths: Record<string, unknown> };

const log = createLogger('openapi-test', 'silent');
let testDb: TestDatabase;
let nc: NatsConnection;
let inbox: Document;
let sandbox: SandboxHandle;
let network: Document;
const closers: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  testDb = await freshDatabase('openapi');
  const db: Kysely<GatewayDatabase> = createDb({ url: testDb.url, applicationName: 'openapi-test' });
  nc = await connectNats(testNatsUrl(), 'openapi-test');
  const { app } = await buildApp({
    log,
    bus: await createBus(nc, instanceId(uniqueInstanceId())),
    db,
    config: loadConfig({ DATABASE_URL: testDb.url, INBOX_SECRET_KEY: 'openapi-test-secret-'.repeat(2) }),
    mailer: createMailer(undefined, 'openapi@test', log),
    health: { database: async () => true, nats: async () => true },
  });
  closers.push(
    () => app.close(),
    () => db.destroy(),
  );
  const res = await app.inject({ url: '/api/v1/schema/' });
  expect(res.statusCode).toBe(200);
  inbox = res.json();

  sandbox = await startSandbox();
  closers.push(() => sandbox.close());
  const sb = await fetch(`${sandbox.url}/sandbox/schema/`);
  expect(sb.status).toBe(200);
  network = (await sb.json()) as Document;
});

afterAll(async () => {
  for (const close of closers.reverse()) await close();
  await nc?.drain();
  await testDb?.drop();
});

/** Every `$ref` in the document, with where it is. */
function refs(doc: unknown): { at: string; ref: string }[] {
  const found: { at: string; ref: string }[] = [];
  const walk = (node: unknown, at: string) => {
    if (Array.isArray(node)) {
      for (const [i, item] of node.entries()) walk(item, `${at}/${i}`);
    } else if (node !== null && typeof node === 'object') {
      for (const [key, value] of Object.entries(node)) {
        if (key === '$ref' && typeof value === 'string') found.push({ at, ref: value });
        else walk(value, `${at}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`);
      }
    }
  };
  walk(doc, '#');
  return found;
}

function unresolved(doc: Document): string[] {
  const schemas = (doc.components as { schemas?: Record<string, unknown> } | undefined)?.schemas ?? {};
  return refs(doc)
    .filter(({ ref }) => !(ref.startsWith('#/components/schemas/') && ref.slice(21) in schemas))
    .map(({ at, ref }) => `${ref} (at ${at})`);
}

const documents = [
  { name: 'inbox (/api/v1/schema/)', doc: () => inbox, paths: ['/api/v1/messages/', '/api/v1/users/{id}/'] },
  {
    name: 'sandbox (/sandbox/schema/)',
    doc: () => network,
    paths: ['/messages', '/sandbox/customers/{wa_id}/messages'],
  },
];

describe.each(documents)('the $name OpenAPI document', ({ doc, paths }) => {
  it('refers only to schemas it contains', () => {
    expect(unresolved(doc())).toEqual([]);
  });

  it('passes a standard OpenAPI validator', async () => {
    const result = await validate(structuredClone(doc()) as Parameters<typeof validate>[0]);
    expect(result.valid ? [] : result.errors.map((e) => e.message)).toEqual([]);
    expect(result.specification).toBe('OpenAPI');
  });

  it('generates a typed client with openapi-typescript', async () => {
    // As a client fetches it: the served JSON text.
    const source = astToString(await openapiTS(JSON.stringify(doc())));
    expect(source).toContain('export interface paths');
    for (const path of paths) expect(source).toContain(`"${path}": {`);
    for (const path of Object.keys(doc().paths)) expect(source).toContain(`"${path}"`);
  });
});

it('names the inbox’s shared schemas as components, and only those its paths reach', () => {
  const schemas = Object.keys((inbox.components as { schemas: Record<string, unknown> }).schemas);
  expect(schemas).toEqual(expect.arrayContaining(['Error', 'User', 'Group', 'Message', 'Chat', 'Webhook']));
  // zod's registry is process-wide and yields each schema as input and output (`UserInput`…);
  // the document keeps what it uses.
  const reached = new Set(refs(inbox).map(({ ref }) => ref.slice(21)));
  expect(schemas.filter((name) => !reached.has(name))).toEqual([]);
});
