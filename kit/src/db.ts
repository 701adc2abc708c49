import { Kysely, PostgresDialect, type RawBuilder, type SelectQueryBuilder, sql } from 'kysely';
import pg from 'pg';
import { preparingPool } from './prepared-statements.ts';

// PostgreSQL bigint (int8) and numeric come back as strings by default; the services store
// epoch seconds and counters in int8 that always fit in a double, so parse them as numbers.
pg.types.setTypeParser(20, (v) => Number.parseInt(v, 10));

export interface Migration {
  /** Sortable, unique within the owning service: `0001_users`. */
  readonly name: string;
  up(db: Kysely<unknown>): Promise<void>;
}

/** A step of a migration: a statement, or a helper that writes its own (`createOutboxTable`). */
export type MigrationStep = RawBuilder<unknown> | ((db: Kysely<unknown>) => Promise<void>);

/** A migration that runs its steps in order, in the migration's transaction. */
export function defineMigration(name: string, ...steps: MigrationStep[]): Migration {
  return {
    name,
    async up(db) {
      for (const step of steps) {
        if (typeof step === 'function') await step(db);
        else await step.execute(db);
      }
    },
  };
}

export interface DbOptions {
  url: string;
  /** Shown in pg_stat_activity, so an operator can tell which service holds a connection. */
  applicationName: string;
  max?: number;
  /** Named prepared statements for recurring statements (`prepared-statements.ts`); on unless false. */
  preparedStatements?: boolean;
}

export function createDb<DB>(opts: DbOptions): Kysely<DB> {
  const pool = new pg.Pool({
    connectionString: opts.url,
    application_name: opts.applicationName,
    max: opts.max ?? 10,
    connectionTimeoutMillis: 5_000,
  });
  // A client losing its server (restart, network) must not crash the process: idle clients
  // report on the pool; a checked-out client between queries (a transaction awaiting other
  // work) has no listener of the pool's, so each gets its own. The query in flight, if any,
  // still rejects and its caller decides.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  return new Kysely<DB>({
    dialect: new PostgresDialect({ pool: opts.preparedStatements === false ? pool : preparingPool(pool) }),
  });
}

/**
 * One page of a filtered query, and how many rows its filters match in all. `rowsOf` picks the
 * columns and the order (a total one, so that pages neither repeat nor skip rows).
 */
export async function pageRows<DB, TB extends keyof DB, O, Row>(
  filtered: SelectQueryBuilder<DB, TB, O>,
  page: { limit: number; offset: number },
  rowsOf: (q: SelectQueryBuilder<DB, TB, O>) => SelectQueryBuilder<DB, TB, Row>,
) {
  const { n } = await filtered
    .select((eb) => eb.fn.countAll<number>().as('n'))
    // The selection's type is lost in a generic builder; the count's is known.
    .$castTo<{ n: number }>()
    .executeTakeFirstOrThrow();
  const rows = await rowsOf(filtered).limit(page.limit).offset(page.offset).execute();
  return { count: Number(n), rows };
}

/** True when the database answers a trivial query within the timeout. */
export async function pingDb<DB>(db: Kysely<DB>, timeoutMs = 2_000): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const timeout = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    const query = sql`select 1`.execute(db).then(() => true);
    return await Promise.race([query, timeout]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Applies the owning service's pending migrations, each in its own transaction, under a
 * session advisory lock keyed by the service, so two processes starting at once apply each
 * migration exactly once. Returns the names it applied.
 */
export async function migrate<DB>(
  typedDb: Kysely<DB>,
  service: string,
  migrations: readonly Migration[],
): Promise<string[]> {
  // Migrations describe the schema before their own change, so they see the database untyped.
  const db = typedDb as unknown as Kysely<unknown>;
  const table = `${service}_migrations`;
  if (!/^[a-z_]+$/.test(service)) throw new Error(`service name "${service}" is not a valid table prefix`);
  const names = migrations.map((m) => m.name);
  if (new Set(names).size !== names.length) throw new Error(`duplicate migration names in ${service}`);

  return db.connection().execute(async (conn) => {
    await sql`select pg_advisory_lock(hashtext(${`switchboard:migrate:${service}`}))`.execute(conn);
    try {
      await sql`create table if not exists ${sql.table(table)} (
        name text primary key,
        applied_at timestamptz not null default now()
      )`.execute(conn);
      const done = await sql<{ name: string }>`select name from ${sql.table(table)}`.execute(conn);
      const applied = new Set(done.rows.map((r) => r.name));
      const ran: string[] = [];
      for (const m of [...migrations].sort((a, b) => a.name.localeCompare(b.name))) {
        if (applied.has(m.name)) continue;
        await conn.transaction().execute(async (trx) => {
          await m.up(trx);
          await sql`insert into ${sql.table(table)} (name) values (${m.name})`.execute(trx);
        });
        ran.push(m.name);
      }
      return ran;
    } finally {
      await sql`select pg_advisory_unlock(hashtext(${`switchboard:migrate:${service}`}))`.execute(conn);
    }
  });
}

/**
 * Whether `err` is PostgreSQL's unique_violation (SQLSTATE 23505), of `constraint` when named:
 * how a store tells "someone else stored it first" from a failure.
 */
export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  if (!(err instanceof pg.DatabaseError) || err.code !== '23505') return false;
  return constraint === undefined || err.constraint === constraint;
}
