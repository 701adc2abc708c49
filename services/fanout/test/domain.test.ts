import { createServer } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import {
  activeSecrets,
  embeddedIpv4,
  generateSecret,
  isBlockedAddress,
  obviouslyPrivateUrl,
  parseDuration,
  parseDurationList,
  sign,
  signatureHeader,
  webhookMessageId,
} from '@switchboard/kit';
import { parseRetryAfter } from '@switchboard/proto';
import { type Receiver, startReceiver } from '@switchboard/testkit';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { afterAll, describe, expect, it } from 'vitest';
import { createDeliveryClient } from '../src/adapters/http-client.ts';
import { loadConfig, settingsFromConfig } from '../src/config.ts';
import { classify, errorClassOf } from '../src/domain/outcome.ts';
import { DEFAULT_RETRY_SCHEDULE_MS, nextRetry, type RetryPolicy, withJitter } from '../src/domain/retry.ts';
import { TEST_SECRET_KEY } from './helpers.ts';

const receivers: Receiver[] = [];
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
});

const policy: RetryPolicy = {
  schedule: DEFAULT_RETRY_SCHEDULE_MS,
  jitter: 0.2,
  throttleFloorMs: 60_000,
  retryAfterCapMs: 36_000_000,
};
const plain = { throttled: false, retryAfterMs: undefined };

describe('retry schedule', () => {
  it('follows the default schedule: at once, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h', () => {
    expect(DEFAULT_RETRY_SCHEDULE_MS).toEqual([0, 5e3, 3e5, 1.8e6, 7.2e6, 1.8e7, 3.6e7, 3.6e7]);
    const mid = () => 0.5;
    expect(nextRetry(policy, 1, plain, mid)).toEqual({ kind: 'retry', delayMs: 5_000 });
    expect(nextRetry(policy, 7, plain, mid)).toEqual({ kind: 'retry', delayMs: 36_000_000 });
    expect(nextRetry(policy, 8, plain, mid)).toEqual({ kind: 'exhausted' });
  });

  it('spreads delays by at most ±20 %', () => {
    expect(withJitter(5_000, 0.2, () => 0)).toBe(4_000);
    expect(withJitter(5_000, 0.2, () => 0.999_999)).toBe(6_000);
    expect(withJitter(0, 0.2, () => 0)).toBe(0);
    for (let i = 0; i < 200; i++) {
      const d = withJitter(300_000, 0.2);
      expect(d).toBeGreaterThanOrEqual(240_000);
      expect(d).toBeLessThanOrEqual(360_000);
    }
  });

  it('waits at least 60 s after a timeout or a 429, and honours a longer Retry-After up to the cap', () => {
    const low = () => 0;
    expect(nextRetry(policy, 1, { throttled: true, retryAfterMs: undefined }, low)).toEqual({
      kind: 'retry',
      delayMs: 60_000,
    });
    expect(nextRetry(policy, 1, { throttled: true, retryAfterMs: 2_000 }, low)).toEqual({
      kind: 'retry',
      delayMs: 60_000,
    });
    expect(nextRetry(policy, 1, { throttled: false, retryAfterMs: 120_000 }, low)).toEqual({
      kind: 'retry',
      delayMs: 120_000,
    });
    expect(nextRetry(policy, 1, { throttled: false, retryAfterMs: 1e12 }, low)).toEqual({
      kind: 'retry',
      delayMs: 36_000_000,
    });
    // A Retry-After shorter than the schedule does not hurry the retry.
    expect(nextRetry(policy, 2, { throttled: false, retryAfterMs: 1_000 }, () => 0.5)).toEqual({
      kind: 'retry',
      delayMs: 300_000,
    });
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    expect(parseRetryAfter('2', now)).toBe(2_000);
    expect(parseRetryAfter(' 120 ', now)).toBe(120_000);
    expect(parseRetryAfter('Wed, 01 Jan 2025 00:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Tue, 31 Dec 2024 00:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('-1', now)).toBeUndefined();
    expect(parseRetryAfter('1.5', now)).toBeUndefined();
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });

  it('parses durations as operators write them', () => {
    expect(parseDuration('250ms')).toBe(250);
    expect(parseDuration('5s')).toBe(5_000);
    expect(parseDuration('5m')).toBe(300_000);
    expect(parseDuration('2h')).toBe(7_200_000);
    expect(parseDuration('5d')).toBe(432_000_000);
    expect(parseDuration('1500')).toBe(1_500);
    expect(parseDuration('5 weeks')).toBeUndefined();
    expect(parseDurationList('0,5s,5m')).toEqual([0, 5_000, 300_000]);
    expect(parseDurationList('0,,5m')).toBeUndefined();
  });
});

describe('outcomes', () => {
  const response = (status: number, retryAfter?: string) =>
    ({ kind: 'response', status, retryAfter, excerpt: '', durationMs: 1 }) as const;

  it('classifies responses', () => {
    expect(classify(response(200), 0).kind).toBe('success');
    expect(classify(response(204), 0).kind).toBe('success');
    expect(classify(response(410), 0).kind).toBe('gone');
    expect(classify(response(302), 0)).toMatchObject({ kind: 'failure', throttled: false });
    expect(classify(response(429), 0)).toMatchObject({ kind: 'failure', throttled: true });
    expect(classify(response(503, '7'), 0)).toMatchObject({
      kind: 'failure',
      retryAfterMs: 7_000,
      throttled: false,
    });
    expect(classify({ kind: 'error', errorClass: 'timeout', message: '', durationMs: 1 }, 0)).toMatchObject({
      throttled: true,
    });
    expect(
      classify({ kind: 'error', errorClass: 'connection', message: '', durationMs: 1 }, 0),
    ).toMatchObject({ throttled: false });
  });

  it('names errors through their causes', () => {
    expect(errorClassOf(Object.assign(new Error('x'), { code: 'ECONNREFUSED' }))).toBe('connection');
    expect(errorClassOf(new AggregateError([Object.assign(new Error('x'), { code: 'ECONNREFUSED' })]))).toBe(
      'connection',
    );
    expect(
      errorClassOf(new Error('wrapped', { cause: Object.assign(new Error('y'), { code: 'ENOTFOUND' }) })),
    ).toBe('dns');
    expect(errorClassOf(new DOMException('timed out', 'TimeoutError'))).toBe('timeout');
    expect(errorClassOf(Object.assign(new Error('x'), { code: 'UND_ERR_HEADERS_TIMEOUT' }))).toBe('timeout');
    expect(errorClassOf(Object.assign(new Error('x'), { code: 'DEPTH_ZERO_SELF_SIGNED_CERT' }))).toBe('tls');
    expect(errorClassOf('what')).toBe('other');
  });
});

describe('signing', () => {
  it('produces signatures standardwebhooks verifies, one per active secret', () => {
    const current = generateSecret();
    const previous = generateSecret();
    const body = '{"object":"whatsapp_business_account","entry":[]}';
    const id = webhookMessageId('8c4e7a5e-0000-4000-8000-000000000000', 'event-1');
    const ts = Math.floor(Date.now() / 1000);
    const header = signatureHeader([current, previous], id, ts, body);
    const headers = { 'webhook-id': id, 'webhook-timestamp': String(ts), 'webhook-signature': header };
    expect(header.split(' ')).toEqual([sign(current, id, ts, body), sign(previous, id, ts, body)]);
    expect(new StandardWebhook(current).verify(body, headers)).toEqual(JSON.parse(body));
    expect(new StandardWebhook(previous).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new StandardWebhook(generateSecret()).verify(body, headers)).toThrow();
  });

  it('keeps the previous secret only until its grace period ends', () => {
    const now = new Date('2025-01-01T00:00:00Z');
    expect(activeSecrets('a', 'b', new Date('2025-01-01T01:00:00Z'), now)).toEqual(['a', 'b']);
    expect(activeSecrets('a', 'b', new Date('2024-12-31T23:00:00Z'), now)).toEqual(['a']);
    expect(activeSecrets('a', null, null, now)).toEqual(['a']);
  });

  it('derives a stable webhook-id per event and webhook', () => {
    expect(webhookMessageId('w1', 'e1')).toBe(webhookMessageId('w1', 'e1'));
    expect(webhookMessageId('w1', 'e1')).not.toBe(webhookMessageId('w2', 'e1'));
    expect(webhookMessageId('w1', 'e1')).not.toBe(webhookMessageId('w1', 'e2'));
    expect(webhookMessageId('w1', 'e1')).toMatch(/^msg_[A-Za-z0-9_-]{32}$/);
  });
});

describe('address guard', () => {
  it('blocks loopback, private, link-local and their IPv6 spellings', () => {
    for (const a of [
      '127.0.0.1',
      '127.8.9.10',
      '10.0.0.1',
      '172.16.5.4',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      '[::1]',
      '::',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '64:ff9b::a00:1',
      'fe80::1',
      'fe80::1%eth0',
      'fd00:ec2::254',
      'fc00::1',
      '2002:7f00:1::',
    ]) {
      expect([a, isBlockedAddress(a)]).toEqual([a, true]);
    }
    for (const a of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8']) {
      expect([a, isBlockedAddress(a)]).toEqual([a, false]);
    }
  });
});

/** `a.b.c.d` as the two hex groups `hhhh:llll`, optionally with every bit inverted (Teredo clients). */
function hexGroups(v4: string, invert = false): string {
  const n = v4.split('.').reduce((acc, octet) => acc * 256 + Number(octet), 0);
  const bits = invert ? ~n >>> 0 : n;
  return `${(bits >>> 16).toString(16)}:${(bits & 0xffff).toString(16)}`;
}

/** Every IPv6 spelling that makes a host connect to the IPv4 address `v4`. */
function embeddings(v4: string): Array<[form: string, address: string]> {
  const hex = hexGroups(v4);
  const [hi, lo] = hex.split(':');
  return [
    ['mapped dotted', `::ffff:${v4}`],
    ['mapped dotted, upper case, brackets', `[::FFFF:${v4}]`],
    ['mapped hex', `::ffff:${hex}`],
    ['mapped hex, uncompressed', `0:0:0:0:0:ffff:${hex}`],
    ['compatible dotted', `::${v4}`],
    ['compatible hex', `::${hex}`],
    ['compatible hex, uncompressed', `0000:0000:0000:0000:0000:0000:${hex}`],
    ['translated dotted', `::ffff:0:${v4}`],
    ['translated hex', `::ffff:0:${hex}`],
    ['translated hex, uncompressed', `0:0:0:0:ffff:0:${hex}`],
    ['NAT64 dotted', `64:ff9b::${v4}`],
    ['NAT64 hex', `64:ff9b::${hex}`],
    ['NAT64 hex, uncompressed', `64:ff9b:0:0:0:0:${hex}`],
    ['6to4', `2002:${hi}:${lo}::1`],
    ['6to4 with subnet and host', `2002:${hi}:${lo}:7:0:0:0:abcd`],
    ['Teredo server', `2001:0:${hex}:8000:f227:${hexGroups('8.8.4.4', true)}`],
    ['Teredo client', `2001:0:${hexGroups('65.54.227.120')}:0:f227:${hexGroups(v4, true)}`],
  ];
}

describe('IPv4 addresses embedded in IPv6', () => {
  const forbidden = {
    loopback: '127.0.0.1',
    'loopback, elsewhere in 127/8': '127.1.2.3',
    'private 10/8': '10.0.0.1',
    'private 172.16/12': '172.16.5.4',
    'private 192.168/16': '192.168.1.1',
    'link-local': '169.254.10.20',
    'cloud metadata': '169.254.169.254',
    CGNAT: '100.64.0.1',
    'this network 0/8': '0.1.2.3',
    unspecified: '0.0.0.0',
  };

  for (const [what, v4] of Object.entries(forbidden)) {
    it(`blocks ${what} (${v4}) in every form`, () => {
      for (const [form, address] of embeddings(v4)) {
        expect({ form, address, blocked: isBlockedAddress(address) }).toEqual({
          form,
          address,
          blocked: true,
        });
      }
    });
  }

  it('allows a public IPv4 address in every form', () => {
    for (const [form, address] of embeddings('8.8.8.8')) {
      expect({ form, address, blocked: isBlockedAddress(address) }).toEqual({
        form,
        address,
        blocked: false,
      });
    }
  });

  it('extracts the address each form carries', () => {
    expect(embeddedIpv4('::7f00:1')).toEqual(['127.0.0.1']);
    expect(embeddedIpv4('[::ffff:0:7f00:1]')).toEqual(['127.0.0.1']);
    expect(embeddedIpv4('::ffff:a9fe:a9fe')).toEqual(['169.254.169.254']);
    expect(embeddedIpv4('64:ff9b::0a00:0001')).toEqual(['10.0.0.1']);
    expect(embeddedIpv4('2002:c0a8:0101::')).toEqual(['192.168.1.1']);
    // RFC 4380's example: server 65.54.227.120, client 192.0.2.45 (stored inverted).
    expect(embeddedIpv4('2001:0:4136:e378:8000:63bf:3fff:fdd2')).toEqual(['65.54.227.120', '192.0.2.45']);
    expect(embeddedIpv4('2606:4700:4700::1111')).toBeUndefined();
  });

  it('names the two forms that used to pass', () => {
    for (const host of ['[::7f00:1]', '[::ffff:0:7f00:1]']) {
      expect([host, isBlockedAddress(host), obviouslyPrivateUrl(`http://${host}:8080/hook`)]).toEqual([
        host,
        true,
        true,
      ]);
    }
  });

  it('blocks the NAT64 local-use prefix whatever it embeds, and the rest of ::/8', () => {
    // 64:ff9b:1::/48 (RFC 8215) is not global, and where it carries the IPv4 address depends
    // on a prefix length chosen by the local operator: refused whole, public addresses too.
    for (const a of ['64:ff9b:1::808:808', '64:ff9b:1:808:8:800::', '64:ff9b:1:ffff::1', '::1:0:0:808:808']) {
      expect([a, isBlockedAddress(a)]).toEqual([a, true]);
    }
  });

  it('still judges ordinary IPv6 addresses by the IPv6 list', () => {
    for (const a of ['2606:4700:4700::1111', '2001:4860:4860::8888', '2a00:1450:4001::200e']) {
      expect([a, isBlockedAddress(a)]).toEqual([a, false]);
    }
    for (const a of ['2001:db8::1', '2001:2::1', 'fd00:ec2::254', 'fe80::1%eth0', 'ff02::1', '100::1']) {
      expect([a, isBlockedAddress(a)]).toEqual([a, true]);
    }
  });
});

describe('delivery client', () => {
  it('refuses private targets at connect time unless allowed', async () => {
    const r = await startReceiver();
    receivers.push(r);
    const guarded = createDeliveryClient({ allowPrivateTargets: false, attemptTimeoutMs: 2_000 });
    const open = createDeliveryClient({ allowPrivateTargets: true, attemptTimeoutMs: 2_000 });
    try {
      for (const host of [
        '127.0.0.1',
        '[::ffff:127.0.0.1]',
        'localhost',
        // Forms the guard used to miss: refused before any connection is tried.
        '[::7f00:1]',
        '[::ffff:0:7f00:1]',
        '[64:ff9b::7f00:1]',
      ]) {
        const result = await guarded.post(`http://${host}:${r.port}/`, {}, '{}');
        expect([host, result]).toMatchObject([host, { kind: 'error', errorClass: 'blocked_address' }]);
      }
      expect(r.requests).toHaveLength(0);
      expect(await open.post(`http://127.0.0.1:${r.port}/`, {}, '{}')).toMatchObject({
        kind: 'response',
        status: 200,
      });
    } finally {
      await guarded.close();
      await open.close();
    }
  });

  it('does not follow redirects, cuts the excerpt at 4 KB and names timeouts and refusals', async () => {
    const redirect = await startReceiver(() => ({
      status: 302,
      headers: { location: 'http://127.0.0.1:1/' },
    }));
    const big = await startReceiver(() => ({ status: 500, body: 'x'.repeat(100_000) }));
    const slow = await startReceiver(() => ({ status: 200, delayMs: 2_000 }));
    const dead = await startReceiver();
    await dead.close();
    receivers.push(redirect, big, slow);
    const client = createDeliveryClient({ allowPrivateTargets: true, attemptTimeoutMs: 300 });
    try {
      expect(await client.post(redirect.url, {}, '{}')).toMatchObject({ kind: 'response', status: 302 });
      const large = await client.post(big.url, {}, '{}');
      expect(large.kind === 'response' && large.excerpt.length).toBe(4096);
      expect(await client.post(slow.url, {}, '{}')).toMatchObject({ kind: 'error', errorClass: 'timeout' });
      expect(await client.post(dead.url, {}, '{}')).toMatchObject({
        kind: 'error',
        errorClass: 'connection',
      });
    } finally {
      await client.close();
    }
  });
});

/** A loopback HTTP server answering with `handler`; `close` also ends open connections. */
async function serve(handler: Parameters<typeof createServer>[1]) {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}/`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describe('delivery client deadline', () => {
  it('ends an attempt whose response trickles in at the attempt timeout, keeping what arrived', {
    timeout: 5_000,
  }, async () => {
    // Headers at once, then one byte every 50 ms for as long as the connection stays open: no
    // single wait reaches the headers or body timeout, only the attempt's own deadline ends it.
    const server = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const drip = setInterval(() => res.write('.'), 50);
      res.on('close', () => clearInterval(drip));
    });
    const client = createDeliveryClient({ allowPrivateTargets: true, attemptTimeoutMs: 400 });
    try {
      const result = await client.post(server.url, {}, '{}');
      expect(result).toMatchObject({ kind: 'response', status: 200 });
      expect(result.durationMs).toBeGreaterThanOrEqual(350);
      expect(result.durationMs).toBeLessThan(2_000);
      expect(result.kind === 'response' && result.excerpt).toMatch(/^\.+$/);
    } finally {
      await client.close();
      await server.close();
    }
  });
});

describe('delivery client responses', () => {
  it('reads the final response after an informational one', async () => {
    const server = await serve((req, res) => {
      req.resume();
      res.writeProcessing();
      setImmediate(() => res.writeHead(429, { 'retry-after': '7' }).end('slow down'));
    });
    const client = createDeliveryClient({ allowPrivateTargets: true, attemptTimeoutMs: 2_000 });
    try {
      expect(await client.post(server.url, {}, '{}')).toMatchObject({
        kind: 'response',
        status: 429,
        retryAfter: '7',
        excerpt: 'slow down',
      });
    } finally {
      await client.close();
      await server.close();
    }
  });

  it('keeps the status of a response whose body is cut short', async () => {
    const server = createNetServer((socket) => {
      socket.once('data', () => {
        socket.write('HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nab');
        setImmediate(() => socket.destroy());
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    const client = createDeliveryClient({ allowPrivateTargets: true, attemptTimeoutMs: 2_000 });
    try {
      expect(await client.post(`http://127.0.0.1:${port}/`, {}, '{}')).toMatchObject({
        kind: 'response',
        status: 200,
        excerpt: 'ab',
      });
    } finally {
      await client.close();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('keeps the connections of complete responses of exactly 4 KB', async () => {
    const sockets = new Set<unknown>();
    const server = await serve((req, res) => {
      sockets.add(req.socket);
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-length': '4096' }).end('z'.repeat(4096)));
    });
    const client = createDeliveryClient({ allowPrivateTargets: true, attemptTimeoutMs: 2_000 });
    try {
      for (let i = 0; i < 5; i++) {
        const result = await client.post(server.url, {}, '{}');
        expect(result.kind === 'response' && result.excerpt).toBe('z'.repeat(4096));
      }
      // Each attempt ends at its 4,096th byte, a moment before undici marks the response complete,
      // so the next may open a second connection; a dropped connection would make one per attempt.
      expect(sockets.size).toBeLessThanOrEqual(2);
    } finally {
      await client.close();
      await server.close();
    }
  });

  it('ends an endless response at 4 KB of excerpt, long before the deadline', async () => {
    const server = await serve((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/plain' });
      const pour = () => {
        if (!res.destroyed) res.write('y'.repeat(1024), pour);
      };
      pour();
    });
    const client = createDeliveryClient({ allowPrivateTargets: true, attemptTimeoutMs: 10_000 });
    try {
      const result = await client.post(server.url, {}, '{}');
      expect(result).toMatchObject({ kind: 'response', status: 200 });
      expect(result.kind === 'response' && result.excerpt).toBe('y'.repeat(4096));
      expect(result.durationMs).toBeLessThan(5_000);
    } finally {
      await client.close();
      await server.close();
    }
  });
});

describe('delivery client URLs', () => {
  it('sends each URL to its own path and query, and refuses one that is not http(s)', async () => {
    const seen: string[] = [];
    const server = await serve((req, res) => {
      seen.push(req.url ?? '');
      req.resume();
      req.on('end', () => res.end('ok'));
    });
    const client = createDeliveryClient({ allowPrivateTargets: true, attemptTimeoutMs: 2_000 });
    try {
      for (const url of [`${server.url}a?x=1&y=2`, `${server.url}b`])
        expect(await client.post(url, {}, '{}')).toMatchObject({ kind: 'response', status: 200 });
      expect(seen).toEqual(['/a?x=1&y=2', '/b']);
      expect(await client.post('ftp://127.0.0.1/file', {}, '{}')).toMatchObject({
        kind: 'error',
        errorClass: 'other',
      });
    } finally {
      await client.close();
      await server.close();
    }
  });
});

describe('configuration', () => {
  const env = { DATABASE_URL: 'postgres://u@127.0.0.1/db', INBOX_SECRET_KEY: TEST_SECRET_KEY };

  it('has the documented defaults', () => {
    const s = settingsFromConfig(loadConfig(env));
    expect(s).toMatchObject({
      allowPrivateTargets: false,
      attemptTimeoutMs: 15_000,
      ackWaitMs: 30_000,
      concurrency: 16,
      disableAfterMs: 5 * 86_400_000,
      rotationGraceMs: 86_400_000,
    });
    expect(s.retry).toEqual({
      schedule: DEFAULT_RETRY_SCHEDULE_MS,
      jitter: 0.2,
      throttleFloorMs: 60_000,
      retryAfterCapMs: 36_000_000,
    });
  });

  it('reads overrides and refuses an ack wait shorter than an attempt', () => {
    const s = settingsFromConfig(
      loadConfig({
        ...env,
        WEBHOOK_ALLOW_PRIVATE_TARGETS: 'True',
        WEBHOOK_RETRY_SCHEDULE: '0,1s,1m',
        WEBHOOK_ATTEMPT_TIMEOUT: '5s',
      }),
    );
    expect(s).toMatchObject({ allowPrivateTargets: true, attemptTimeoutMs: 5_000, ackWaitMs: 20_000 });
    expect(s.retry.schedule).toEqual([0, 1_000, 60_000]);
    expect(() => loadConfig({ ...env, WEBHOOK_ACK_WAIT: '10s' })).toThrow(/WEBHOOK_ACK_WAIT/);
    expect(() => loadConfig({ ...env, WEBHOOK_RETRY_SCHEDULE: 'soon' })).toThrow(/WEBHOOK_RETRY_SCHEDULE/);
  });

  it('requires the instance secret key, at least 32 characters', () => {
    expect(() => loadConfig({ DATABASE_URL: env.DATABASE_URL })).toThrow(/INBOX_SECRET_KEY: required/);
    expect(() => loadConfig({ ...env, INBOX_SECRET_KEY: 'x'.repeat(31) })).toThrow(
      /INBOX_SECRET_KEY: use at least 32/,
    );
    expect(loadConfig(env).INBOX_SECRET_KEY).toBe(TEST_SECRET_KEY);
  });
});
