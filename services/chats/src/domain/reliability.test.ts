import { classifyFailure } from '@switchboard/proto';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { backoffMs, INBOUND_RETRY_POLICY, retryDecision } from './retry.ts';
import { storableJsonText, storableText } from './storable.ts';

/** The shape node-postgres gives a server error: `name` 'error', a SQLSTATE and a severity. */
function pgError(code: string): Error {
  return Object.assign(new Error(`server said ${code}`), { name: 'error', code, severity: 'ERROR' });
}

describe('failure classes', () => {
  it('treats an unreachable or restarting database and NATS as transient', () => {
    for (const code of ['08006', '08001', '57P01', '57P03', '57014', '40001', '40P01', '53300', '58030']) {
      expect([code, classifyFailure(pgError(code)).class]).toEqual([code, 'transient']);
    }
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    expect(classifyFailure(refused).class).toBe('transient');
    expect(classifyFailure(new Error('Connection terminated unexpectedly')).class).toBe('transient');
    expect(classifyFailure(new Error('timeout exceeded when trying to connect')).class).toBe('transient');
    const natsTimeout = Object.assign(new Error('timeout'), { name: 'TimeoutError' });
    expect(classifyFailure(natsTimeout).class).toBe('transient');
    // A wrapper (undici's "fetch failed" TypeError) is as transient as its cause.
    const wrapped = new TypeError('fetch failed', { cause: refused });
    expect(classifyFailure(wrapped).class).toBe('transient');
    // A prepared statement outdated by a migration: it runs unnamed when the work is retried.
    const replanned = Object.assign(new Error('cached plan must not change result type'), {
      name: 'error',
      code: '0A000',
      severity: 'ERROR',
    });
    expect(classifyFailure(replanned).class).toBe('transient');
  });

  it('treats data exceptions, broken constraints, schema failures and bugs as permanent', () => {
    for (const code of ['22P05', '22021', '22003', '23502', '54000', '0A000']) {
      expect([code, classifyFailure(pgError(code)).class]).toEqual([code, 'permanent']);
    }
    expect(classifyFailure(pgError('22P05')).code).toBe('22P05');
    const zod = z.object({ a: z.string() }).safeParse({});
    expect(classifyFailure(zod.error).class).toBe('permanent');
    expect(classifyFailure(new TypeError("Cannot read properties of undefined (reading 'x')")).class).toBe(
      'permanent',
    );
  });

  it('tells a lost connection from a transient failure of the work itself', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    const natsClosed = Object.assign(new Error('closed connection'), { name: 'ClosedConnectionError' });
    for (const lost of [
      pgError('08006'),
      pgError('57P01'),
      pgError('57P03'),
      refused,
      new Error('Connection terminated unexpectedly'),
      // Wrapped by whoever caught it first: the cause decides.
      new Error('insert failed', { cause: new Error('Connection terminated unexpectedly') }),
      new Error('fold failed', { cause: pgError('57P01') }),
      natsClosed,
    ])
      expect([lost.message, classifyFailure(lost).lostConnection]).toEqual([lost.message, true]);
    const natsTimeout = Object.assign(new Error('timeout'), { name: 'TimeoutError' });
    for (const own of [
      pgError('40P01'),
      pgError('40001'),
      pgError('57014'),
      pgError('55P03'),
      pgError('23505'),
      natsTimeout,
      new Error('fold failed', { cause: pgError('40P01') }),
    ])
      expect([own.message, classifyFailure(own).lostConnection]).toEqual([own.message, false]);
  });

  it('leaves other failures unknown', () => {
    expect(classifyFailure(pgError('42P01')).class).toBe('unknown');
    expect(classifyFailure(new Error('something odd')).class).toBe('unknown');
    expect(classifyFailure('a string').class).toBe('unknown');
  });
});

describe('retry decisions', () => {
  it('retries a transient failure without limit, with backoff capped at the policy maximum', () => {
    for (const attempt of [1, 2, 20, 21, 1_000, 100_000]) {
      const d = retryDecision('transient', attempt);
      expect(d.action).toBe('retry');
      if (d.action === 'retry') expect(d.delayMs).toBeLessThanOrEqual(INBOUND_RETRY_POLICY.maxDelayMs);
    }
    expect(backoffMs(1, INBOUND_RETRY_POLICY, () => 0.5)).toBe(500);
    expect(backoffMs(4, INBOUND_RETRY_POLICY, () => 0.5)).toBe(4_000);
    expect(backoffMs(50, INBOUND_RETRY_POLICY, () => 0.5)).toBe(30_000);
  });

  it('gives up on a permanent failure at once and on an unknown one after a few attempts', () => {
    expect(retryDecision('permanent', 1)).toEqual({ action: 'give_up' });
    expect(retryDecision('unknown', 1).action).toBe('retry');
    expect(retryDecision('unknown', INBOUND_RETRY_POLICY.unknownAttempts - 1).action).toBe('retry');
    expect(retryDecision('unknown', INBOUND_RETRY_POLICY.unknownAttempts)).toEqual({ action: 'give_up' });
  });
});

describe('storable text and JSON', () => {
  it('replaces U+0000 and unpaired surrogates in text with U+FFFD', () => {
    expect(storableText('a\u0000b')).toBe('a\uFFFDb');
    expect(storableText('x\uD800y')).toBe('x\uFFFDy');
    expect(storableText('fine 😀')).toBe('fine 😀');
  });

  it('rewrites only the escapes jsonb refuses and leaves everything else as written', () => {
    const nul = '{"text":{"body":"a\\u0000b"},"n":12345678901234567890,"k":1.50}';
    const out = storableJsonText(nul);
    expect(out).toBe('{"text":{"body":"a\\ufffdb"},"n":12345678901234567890,"k":1.50}');
    expect(JSON.parse(out ?? '')).toMatchObject({ text: { body: 'a\uFFFDb' } });
    // A proper surrogate pair stays; lone halves are replaced.
    expect(storableJsonText('["\\ud83d\\ude00","\\ud83d","\\ude00x"]')).toBe(
      '["\\ud83d\\ude00","\\ufffd","\\ufffdx"]',
    );
    // An escaped backslash followed by "u0000" is text, not an escape.
    expect(storableJsonText('["\\\\u0000"]')).toBe('["\\\\u0000"]');
    const plain = '{"a": [1, 2.0, "b"]}';
    expect(storableJsonText(plain)).toBe(plain);
    expect(storableJsonText('not json')).toBeNull();
  });
});
