import { validate } from '@readme/openapi-parser';
import { buildPartnerApp, loadPartnerConfig } from '@switchboard/gateway';
import { connectNats, createLogger, type HttpServer, type NatsConnection } from '@switchboard/kit';
import { astToString, openapiTS } from '@switchboard/openapi-gen';
import { PARTNER_SCOPE } from '@switchboard/proto';
import { createBus } from '@switchboard/proto/bus';
import { testNatsUrl } from '@switchboard/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The partner API's document, as FastAPI users expect it: `/openapi.json` (version 1.1.2) and
 * `/docs`; a standard validator accepts it, every `$ref` resolves, openapi-typescript turns it
 * into a typed client, and every operation documents FastAPI's 422 or needs no input.
 */

type Document = Record<string, unknown> & {
  info: { version: string };
  paths: Record<string, Record<string, { responses?: Record<string, unknown>; security?: unknown }>>;
  components?: { schemas?: Record<string, unknown> };
};

let app: HttpServer;
let nc: NatsConnection;
let doc: Document;

beforeAll(async () => {
  nc = await connectNats(testNatsUrl(), 'partner-openapi-test');
  app = await buildPartnerApp({
    log: createLogger('partner-openapi-test', 'silent'),
    bus: await createBus(nc, PARTNER_SCOPE),
    config: loadPartnerConfig({ PARTNER_SESSION_SECRET: 'openapi-test-session-secret-0123456789' }),
  });
  const res = await app.inject({ url: '/openapi.json' });
  expect(res.statusCode).toBe(200);
  doc = res.json();
});

afterAll(async () => {
  await app?.close();
  await nc?.drain();
});

function refs(node: unknown, found: string[] = []): string[] {
  if (Array.isArray(node)) for (const item of node) refs(item, found);
  else if (node !== null && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') found.push(value);
      else refs(value, found);
    }
  }
  return found;
}

describe('the partner OpenAPI document (/openapi.json)', () => {
  it('is version 1.1.2 with the spec’s paths', () => {
    expect(doc.info.version).toBe('1.1.2');
    expect(Object.keys(doc.paths).sort()).toEqual(
      [
        '/',
        '/health',
        '/v1',
        '/v1/partner',
        '/v1/instances',
        '/v1/instances/{instance_id}',
        '/v1/auth/login',
        '/v1/auth/logout',
        '/v1/auth/session',
      ].sort(),
    );
  });

  it('refers only to schemas it contains', () => {
    const schemas = doc.components?.schemas ?? {};
    const missing = refs(doc).filter(
      (r) => !(r.startsWith('#/components/schemas/') && r.slice(21) in schemas),
    );
    expect(missing).toEqual([]);
  });

  it('passes a standard OpenAPI validator', async () => {
    const result = await validate(structuredClone(doc) as Parameters<typeof validate>[0]);
    expect(result.valid ? [] : result.errors.map((e) => e.message)).toEqual([]);
  });

  it('generates a typed client with openapi-typescript', async () => {
    const source = astToString(await openapiTS(JSON.stringify(doc)));
    for (const path of Object.keys(doc.paths)) expect(source).toContain(`"${path}"`);
    expect(source).toContain('HTTPValidationError');
  });

  it('documents the 422 on every operation that takes input, and the bearer key where one is needed', () => {
    const create = doc.paths['/v1/instances']?.post;
    expect(create?.responses).toHaveProperty('202');
    expect(create?.responses).toHaveProperty('422');
    expect(create?.security).toEqual([{ HTTPBearer: [] }]);
    expect(doc.paths['/v1/instances']?.get?.responses).toHaveProperty('422');
    expect(doc.paths['/v1/auth/login']?.post?.responses).toHaveProperty('422');
    expect(doc.paths['/v1/auth/login']?.post?.security).toBeUndefined();
  });

  it('answers the router’s own refusals in its shape too', async () => {
    const res = await app.inject({ url: '/v1/instances/%E0%A4%A' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ detail: expect.any(String) });
    const missing = await app.inject({ url: '/v2/nothing' });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual({ detail: 'Not Found' });
  });

  it('serves the docs page', async () => {
    const res = await app.inject({ url: '/docs/' });
    expect([200, 302]).toContain(res.statusCode);
  });
});
