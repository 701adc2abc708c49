import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import { waitFor } from '../infra/ports.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** nats-server started for this test run. */
    natsUrl: string;
    /** Maintenance database URL of the run's PostgreSQL (embedded, or DATABASE_URL). */
    pgAdminUrl: string;
    /** Name of the database holding every service's migrations, cloned per test file. */
    templateDatabase: string;
    /** Prefix of every database this run creates; teardown drops them all. */
    databasePrefix: string;
  }
}

export { waitFor };

export function testNatsUrl(): string {
  return inject('natsUrl');
}

/** An instance id no other test uses, so parallel tests on one NATS server never meet. */
export function uniqueInstanceId(prefix = 't'): string {
  return `${prefix}-${randomBytes(5).toString('hex')}`;
}

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

export interface TestDatabase {
  readonly url: string;
  readonly name: string;
  drop(): Promise<void>;
}

/**
 * A new database cloned from the migrated template: every test file starts from the same
 * schema and no data, without paying for migrations again.
 */
export async function freshDatabase(label = 'db'): Promise<TestDatabase> {
  const admin = inject('pgAdminUrl');
  const template = inject('templateDatabase');
  const name = `${inject('databasePrefix')}${label
    .replace(/[^a-z0-9_]/gi, '_')
    .toLowerCase()
    .slice(0, 24)}_${randomBytes(4).toString('hex')}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  try {
    // Two clones of one template at the same instant can collide (55006: source in use); retry.
    await waitFor(
      async () => {
        try {
          await client.query(`create database "${name}" template "${template}"`);
          return true;
        } catch (err) {
          if ((err as { code?: string }).code === '55006') return false;
          throw err;
        }
      },
      30_000,
      `database ${name}`,
    );
  } finally {
    await client.end();
  }
  return {
    url: withDatabase(admin, name),
    name,
    async drop() {
      const c = new pg.Client({ connectionString: admin });
      await c.connect();
      try {
        await c.query(`drop database if exists "${name}" with (force)`);
      } finally {
        await c.end();
      }
    },
  };
}

export * from './otlp-receiver.ts';
export * from './processes.ts';
