import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, startTestGateway, type TestGateway } from './helpers.ts';

const WINDOW_SECONDS = 900;
const ATTACKER = '203.0.113.7';
const OWNER = '198.51.100.20';
const SPOOFER = '203.0.113.9';

/** One login attempt as seen from `address` (the socket address: TRUST_PROXY is off here). */
function attempt(gw: TestGateway, address: string, username: string, password: string) {
  return gw.app.inject({
    method: 'POST',
    url: '/api/v1/auth/token/',
    remoteAddress: address,
    payload: { username, password },
  });
}

function tally(statuses: number[]): Record<number, number> {
  const out: Record<number, number> = {};
  for (const s of statuses) out[s] = (out[s] ?? 0) + 1;
  return out;
}

/** Moves every open window `seconds` into the past, as if that much time had gone by. */
async function age(gw: TestGateway, seconds: number): Promise<void> {
  await sql`update auth_attempts set window_start = window_start - make_interval(secs => ${seconds})`.execute(
    gw.db,
  );
}

describe('login limit under parallel guessing', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    // The shipped defaults: 5 per username+address, 20 per address, 900 s window.
    gw = await startTestGateway();
  });
  afterAll(async () => gw.close());

  it('lets at most 5 of 30 parallel wrong passwords reach the password check; the rest get 429', async () => {
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) => attempt(gw, ATTACKER, ADMIN.username, `wrong-${i}`)),
    );
    const counts = tally(answers.map((r) => r.statusCode));
    expect(counts).toEqual({ 400: 5, 429: 25 });
    for (const r of answers.filter((a) => a.statusCode === 429)) {
      expect(r.json().code).toBe('too_many_attempts');
      const retryAfter = Number(r.headers['retry-after']);
      expect(retryAfter).toBeGreaterThan(WINDOW_SECONDS - 60);
      expect(retryAfter).toBeLessThanOrEqual(WINDOW_SECONDS);
    }
  });

  it('still lets the owner in from an address that has not failed', async () => {
    const r = await attempt(gw, OWNER, ADMIN.username, ADMIN.password);
    expect(r.statusCode).toBe(200);
    expect(r.json().token).toMatch(/^[0-9a-f]{40}$/);
  });

  it('keeps refusing the attacking address, even with the right password and after the owner logged in', async () => {
    const r = await attempt(gw, ATTACKER, ADMIN.username, ADMIN.password);
    expect(r.statusCode).toBe(429);
    expect(Number(r.headers['retry-after'])).toBeGreaterThan(0);
  });

  it('counts Retry-After from the start of the window and reopens once it has passed', async () => {
    await age(gw, 600);
    const waiting = await attempt(gw, ATTACKER, ADMIN.username, ADMIN.password);
    expect(waiting.statusCode).toBe(429);
    const retryAfter = Number(waiting.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(WINDOW_SECONDS - 600 - 60);
    expect(retryAfter).toBeLessThanOrEqual(WINDOW_SECONDS - 600);

    await age(gw, WINDOW_SECONDS - 600);
    expect((await attempt(gw, ATTACKER, ADMIN.username, ADMIN.password)).statusCode).toBe(200);
  });

  it('trims windows that have passed', async () => {
    await attempt(gw, '192.0.2.1', 'someone-else', 'guess');
    await age(gw, WINDOW_SECONDS + 1);
    await attempt(gw, '192.0.2.2', 'another', 'guess');
    const rows = await sql<{ key: string }>`select key from auth_attempts order by key`.execute(gw.db);
    expect(rows.rows.map((r) => r.key)).toEqual(['addr:192.0.2.2', 'user:another|addr:192.0.2.2']);
  });

  it('does not count successful logins against the address, and a success resets its username+address', async () => {
    const address = '192.0.2.50';
    // More correct logins than either limit allows failures: each gives its slot back, so none
    // is refused. (Sequential: an attempt holds its slot while its password is being checked.)
    const ok: number[] = [];
    for (let i = 0; i < 21; i++)
      ok.push((await attempt(gw, address, ADMIN.username, ADMIN.password)).statusCode);
    expect(tally(ok)).toEqual({ 200: 21 });
    for (let i = 0; i < 4; i++) {
      expect((await attempt(gw, address, ADMIN.username, `typo-${i}`)).statusCode).toBe(400);
    }
    expect((await attempt(gw, address, ADMIN.username, ADMIN.password)).statusCode).toBe(200);
    // The success forgot the 4 typos, so 5 more wrong passwords are checked before the 429.
    const after = [];
    for (let i = 0; i < 6; i++)
      after.push((await attempt(gw, address, ADMIN.username, `typo-${i}`)).statusCode);
    expect(after).toEqual([400, 400, 400, 400, 400, 429]);
  });
});

describe('per-address login limit', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway();
  });
  afterAll(async () => gw.close());

  it('lets one address make at most 20 parallel guesses across many usernames', async () => {
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) => attempt(gw, ATTACKER, `user-${i}`, 'guess')),
    );
    expect(tally(answers.map((r) => r.statusCode))).toEqual({ 400: 20, 429: 10 });
    // That address is refused for any username, the owner's included ...
    const fresh = await attempt(gw, ATTACKER, ADMIN.username, ADMIN.password);
    expect(fresh.statusCode).toBe(429);
    expect(Number(fresh.headers['retry-after'])).toBeGreaterThan(0);
    // A refusal by the address rule gave back the username+address slot it had taken first.
    const pairKey = `user:${ADMIN.username}|addr:${ATTACKER}`;
    const pair = await sql`select 1 from auth_attempts where key = ${pairKey}`.execute(gw.db);
    expect(pair.rows).toEqual([]);
    // ... while other addresses are not.
    expect((await attempt(gw, OWNER, ADMIN.username, ADMIN.password)).statusCode).toBe(200);
  });
});

describe('login limit behind a proxy', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({ TRUST_PROXY: 'loopback' });
  });
  afterAll(async () => gw.close());

  it('keys on the forwarded client address, so one client behind the proxy cannot lock out another', async () => {
    const via = (client: string, password: string) =>
      gw.app.inject({
        method: 'POST',
        url: '/api/v1/auth/token/',
        headers: { 'x-forwarded-for': client },
        payload: { username: ADMIN.username, password },
      });
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => via(ATTACKER, `wrong-${i}`)));
    expect(tally(answers.map((r) => r.statusCode))).toEqual({ 400: 5, 429: 5 });
    expect((await via(ATTACKER, ADMIN.password)).statusCode).toBe(429);
    expect((await via(OWNER, ADMIN.password)).statusCode).toBe(200);
  });

  it('believes only the hop the proxy added, so entries the client wrote in front change nothing', async () => {
    const spoofed = (i: number) =>
      gw.app.inject({
        method: 'POST',
        url: '/api/v1/auth/token/',
        headers: { 'x-forwarded-for': `198.51.100.${i}, ${SPOOFER}` },
        payload: { username: ADMIN.username, password: `wrong-${i}` },
      });
    const answers = [];
    for (let i = 0; i < 8; i++) answers.push((await spoofed(i)).statusCode);
    expect(tally(answers)).toEqual({ 400: 5, 429: 3 });
  });
});
