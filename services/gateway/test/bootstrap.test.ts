import { Writable } from 'node:stream';
import { createLogger } from '@switchboard/kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureAdmin } from '../src/use-cases/bootstrap.ts';
import { login, startTestGateway, type TestGateway } from './helpers.ts';

describe('first admin', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway();
    // An instance before its first start: no users at all.
    await gw.db.deleteFrom('users').execute();
  });
  afterAll(async () => gw.close());

  it('logs a generated password once, readable, and it signs in', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const log = createLogger('gateway-test', 'info', sink);
    const cfg = { adminUsername: 'owner', adminEmail: undefined, adminPassword: undefined };
    await ensureAdmin(gw.db, gw.users, cfg, log);
    await ensureAdmin(gw.db, gw.users, cfg, log);

    const created = lines
      .map((l) => JSON.parse(l) as { msg: string; username?: string; generated_password?: string })
      .filter((l) => l.msg.startsWith('created the first admin user'));
    expect(created).toHaveLength(1);
    const password = created[0]?.generated_password ?? '';
    expect(password).not.toBe('[redacted]');
    expect(password.length).toBeGreaterThanOrEqual(16);
    expect(await login(gw, 'owner', password)).toMatch(/^[0-9a-f]{40}$/);
  });

  it('still redacts secrets under the usual keys', () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    createLogger('gateway-test', 'info', sink).info(
      { password: 'hunter2-hunter2', user: { token: 'abc' } },
      'x',
    );
    expect(lines.join('')).not.toContain('hunter2');
    expect(lines.join('')).not.toContain('"abc"');
  });
});
