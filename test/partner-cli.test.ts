import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freshDatabase, repoRoot, type TestDatabase } from '@switchboard/testkit';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
let db: TestDatabase;

beforeAll(async () => {
  db = await freshDatabase('partner_cli');
});

afterAll(async () => {
  await db?.drop();
});

describe('npm run partner -- create <name>', () => {
  it('prints the id, key and webhook secret once; keeps only the key’s hash', async () => {
    const { stdout } = await run(
      process.execPath,
      [join(repoRoot, 'scripts/partner.ts'), 'create', 'Northwind', 'Traders'],
      {
        cwd: repoRoot,
        env: {
          ...process.env,
          PROVISIONER_DATABASE_URL: db.url,
          PROVISIONER_SECRET_KEY: 'partner-cli-test-secret-0123456789abcdef',
        },
      },
    );
    const field = (name: string) => new RegExp(`^${name}\\s+(\\S+)$`, 'm').exec(stdout)?.[1] ?? '';
    expect(field('partner_id')).toMatch(/^pa-[0-9a-f]{12}$/);
    expect(field('api_key')).toMatch(/^sbp_/);
    expect(field('webhook_secret')).toMatch(/^whsec_/);

    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ name: string; api_key_hash: string; sealed: string }>(
        "select name, api_key_hash, encode(webhook_secret_sealed, 'escape') as sealed from partners",
      );
      expect(rows).toHaveLength(1);
      expect(rows[0]?.name).toBe('Northwind Traders');
      expect(rows[0]?.api_key_hash).toBe(createHash('sha256').update(field('api_key')).digest('hex'));
      expect(JSON.stringify(rows)).not.toContain(field('api_key'));
      expect(JSON.stringify(rows)).not.toContain(field('webhook_secret'));
    } finally {
      await client.end();
    }
  });

  it('without a name: usage, exit code 2', async () => {
    const failed = await run(process.execPath, [join(repoRoot, 'scripts/partner.ts'), 'create'], {
      cwd: repoRoot,
    }).then(
      () => undefined,
      (err: { code?: number; stderr?: string }) => err,
    );
    expect(failed?.code).toBe(2);
    expect(failed?.stderr).toContain('usage: npm run partner -- create <name>');
  });
});
