import { validate } from '@readme/openapi-parser';
import { buildApp, type GatewayDatabase } from '@switchboard/gateway';
import { loadConfig } from '@switchboard/gateway/config';
import { connectNats, createDb, createLogger, createMailer, type NatsConnection } from '@switchboard/kit';
import { astToString, openapiTS } from '@switchboard/openapi-gen';
import { instanceId } from '@switchboard/proto';
import { createBus } from '@switchboard/proto/bus';
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

// ---- one API model: times, lists and wa_ids alike in every operation ----

type Schema = Record<string, unknown> & {
  $ref?: string;
  type?: string | string[];
  description?: string;
  pattern?: string;
  format?: string;
  maximum?: number;
  properties?: Record<string, Schema>;
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  additionalProperties?: boolean | Schema;
};

function resolve(doc: Document, s: Schema): Schema {
  if (!s.$ref) return s;
  const schemas = (doc.components as { schemas: Record<string, Schema> }).schemas;
  return resolve(doc, schemas[s.$ref.slice('#/components/schemas/'.length)] ?? {});
}

/** Every named property reachable from a schema, with where it is (refs followed once each). */
function propertiesOf(
  doc: Document,
  root: Schema,
  at: string,
): Array<{ at: string; name: string; schema: Schema }> {
  const found: Array<{ at: string; name: string; schema: Schema }> = [];
  const seen = new Set<Schema>();
  const walk = (node: Schema, where: string) => {
    const s = resolve(doc, node);
    if (seen.has(s)) return;
    seen.add(s);
    for (const [name, p] of Object.entries(s.properties ?? {})) {
      found.push({ at: `${where}.${name}`, name, schema: resolve(doc, p) });
      walk(p, `${where}.${name}`);
    }
    for (const sub of [...(s.anyOf ?? []), ...(s.oneOf ?? []), ...(s.allOf ?? [])]) walk(sub, where);
    if (s.items) walk(s.items, `${where}[]`);
    if (s.additionalProperties && typeof s.additionalProperties === 'object')
      walk(s.additionalProperties, where);
  };
  walk(root, at);
  return found;
}

/** The non-null alternatives of a schema (zod writes `nullable` as anyOf with `{type: "null"}`). */
function nonNull(doc: Document, s: Schema): Schema[] {
  const alts = s.anyOf ?? s.oneOf;
  return alts ? alts.map((a) => resolve(doc, a)).filter((a) => a.type !== 'null') : [s];
}

interface OperationObject {
  parameters?: Array<{ name: string; in: string; schema?: Schema }>;
  requestBody?: { content?: Record<string, { schema?: Schema }> };
  responses?: Record<string, { content?: Record<string, { schema?: Schema }> }>;
}

function operations(doc: Document): Array<{ key: string; op: OperationObject }> {
  return Object.entries(doc.paths as Record<string, Record<string, OperationObject>>).flatMap(
    ([path, item]) =>
      Object.entries(item)
        .filter(([method]) => ['get', 'post', 'put', 'patch', 'delete'].includes(method))
        .map(([method, op]) => ({ key: `${method.toUpperCase()} ${path}`, op })),
  );
}

const okSchemas = (op: OperationObject) =>
  Object.entries(op.responses ?? {})
    .filter(([status]) => status.startsWith('2'))
    .flatMap(([status, r]) =>
      r.content?.['application/json']?.schema
        ? [[status, r.content['application/json'].schema] as const]
        : [],
    );

describe('the inbox API model', () => {
  const TIME =
    /^(at|timestamp|before_time|since_time|[a-z_]+_at|[a-z_]+_since|[a-z_]+_timestamp|sent|delivered|read)$/;

  it('answers every time as an integer of POSIX seconds, never a date-time string', () => {
    const wrong: string[] = [];
    let times = 0;
    for (const { key, op } of operations(inbox)) {
      for (const [status, schema] of okSchemas(op)) {
        for (const { at, name, schema: s } of propertiesOf(inbox, schema, `${key} ${status}`)) {
          if (nonNull(inbox, s).some((alt) => alt.format === 'date-time')) wrong.push(`${at}: a date-time`);
          if (!TIME.test(name) || at.includes('waba_payload')) continue;
          for (const alt of nonNull(inbox, s)) {
            times++;
            const described = `${alt.description ?? ''} ${s.description ?? ''}`;
            if (alt.type !== 'integer' || alt.format !== undefined || !described.includes('POSIX seconds')) {
              wrong.push(`${at}: ${JSON.stringify(s)}`);
            }
          }
        }
      }
    }
    expect(wrong).toEqual([]);
    expect(times).toBeGreaterThan(20);
  });

  const LIST_EXTRAS = new Set(['fetched_at', 'failed_providers']);
  it('answers every limit/offset list as {count, next, previous, results}, with no maximum on limit', () => {
    const lists = operations(inbox).filter(({ op }) => {
      const names = (op.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name);
      return names.includes('limit') && names.includes('offset');
    });
    expect(lists.map((l) => l.key)).toEqual(
      expect.arrayContaining([
        'GET /api/v1/templates/',
        'GET /api/v1/whatsapp_accounts/',
        'GET /api/v1/chats/',
        'GET /api/v1/audit_logs/',
        'GET /api/v1/webhooks/waba/',
      ]),
    );
    for (const { key, op } of lists) {
      const [, schema] = okSchemas(op)[0] ?? [];
      const props = Object.keys(resolve(inbox, schema ?? {}).properties ?? {});
      // Beside the page, a list may say how fresh (`fetched_at`) or how complete (`failed_providers`) it is.
      expect([key, props.filter((p) => !LIST_EXTRAS.has(p))]).toEqual([
        key,
        ['count', 'next', 'previous', 'results'],
      ]);
      const limit = op.parameters?.find((p) => p.name === 'limit')?.schema ?? {};
      expect([key, limit.type, limit.maximum]).toEqual([key, 'integer', undefined]);
    }
  });

  it('holds every wa_id it takes or returns to one rule', () => {
    const WA_ID = /^(wa_id|customer_wa_id|wa_ids|assigned_wa_ids)$/;
    const pattern = String.raw`^\d{5,20}$`;
    const wrong: string[] = [];
    let seen = 0;
    const check = (at: string, s: Schema) => {
      const target = s.type === 'array' && s.items ? resolve(inbox, s.items) : s;
      seen++;
      if (target.pattern !== pattern) wrong.push(`${at}: ${JSON.stringify(s)}`);
    };
    for (const { key, op } of operations(inbox)) {
      for (const p of op.parameters ?? [])
        if (WA_ID.test(p.name)) check(`${key} ${p.in} ${p.name}`, p.schema ?? {});
      const bodies = [
        ...okSchemas(op),
        ...Object.entries(op.requestBody?.content ?? {}).flatMap(([type, c]) =>
          c.schema ? [[type, c.schema] as const] : [],
        ),
      ];
      for (const [where, schema] of bodies) {
        for (const { at, name, schema: s } of propertiesOf(inbox, schema, `${key} ${where}`)) {
          // Inside the network's own payloads a wa_id is whatever the network wrote.
          if (WA_ID.test(name) && !at.includes('waba_payload.') && !/\.(contacts|phones)\b/.test(at))
            check(at, s);
        }
      }
    }
    expect(wrong).toEqual([]);
    expect(seen).toBeGreaterThan(10);
  });
});
