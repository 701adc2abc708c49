import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createContactCheckClient } from './contacts-check.ts';
import { NetworkError } from './errors.ts';

let server: Server | undefined;
afterEach(async () => {
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = undefined;
});

/** A loopback network answering every request with this status and body; records what it got. */
async function network(status: number, body: string): Promise<{ url: string; got: string[] }> {
  const got: string[] = [];
  server = createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => {
      text += c.toString('utf8');
    });
    req.on('end', () => {
      got.push(`${req.method} ${req.url} ${req.headers['d360-api-key']} ${text}`);
      res.writeHead(status, { 'content-type': 'application/json' }).end(body);
    });
  });
  await new Promise<void>((r) => server?.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, got };
}

describe('the contact check client', () => {
  it('asks POST /v1/contacts with the key and reads the status', async () => {
    const n = await network(
      200,
      '{"contacts":[{"input":"+4915550001","status":"valid","wa_id":"4915550001"}]}',
    );
    const client = createContactCheckClient({ baseUrl: n.url, apiKey: 'key-1' });
    expect(await client.check('4915550001')).toBe('valid');
    expect(n.got).toEqual([
      'POST /v1/contacts key-1 {"blocking":"wait","contacts":["+4915550001"],"force_check":true}',
    ]);
  });

  it('answers unknown where the network has no contact check (the Cloud API: 404)', async () => {
    const n = await network(404, '{"error":{"message":"Unknown path","type":"OAuthException","code":100}}');
    expect(await createContactCheckClient({ baseUrl: n.url, apiKey: 'k' }).check('4915550001')).toBe(
      'unknown',
    );
  });

  it('throws a retryable NetworkError on a 5xx and an invalid_response on a wrong shape', async () => {
    const down = await network(503, '{}');
    const err = await createContactCheckClient({ baseUrl: down.url, apiKey: 'k' })
      .check('4915550001')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect((err as NetworkError).retryable).toBe(true);
    await new Promise<void>((r) => server?.close(() => r()));
    const odd = await network(200, '{"people":[]}');
    const wrong = await createContactCheckClient({ baseUrl: odd.url, apiKey: 'k' })
      .check('4915550001')
      .catch((e: unknown) => e);
    expect((wrong as NetworkError).kind).toBe('invalid_response');
  });
});
