import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import { waitFor } from './infra/ports.ts';

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

type Provided = 'natsUrl' | 'pgAdminUrl' | 'templateDatabase' | 'databasePrefix';

/**
 * A value the run's global set-up (test/global-setup.ts) provides. Only the `integration`
 * project has that set-up: a `unit` test asking for NATS or PostgreSQL gets told where it belongs.
 */
function provided(key: Provided): string {
  const value = inject(key);
  if (!value) {
    throw new Error(
      `${key} is not provided: this test needs NATS or PostgreSQL, so it belongs in the integration project (vitest.config.ts), not in unit.`,
    );
  }
  return value;
}

export function testNatsUrl(): string {
  return provided('natsUrl');
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
  const admin = provided('pgAdminUrl');
  const template = provided('templateDatabase');
  const name = `${provided('databasePrefix')}${label
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
