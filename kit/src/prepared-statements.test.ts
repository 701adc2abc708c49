import { freshDatabase } from '@switchboard/testkit';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb } from './db.ts';
import { type PreparedStatementOptions, preparingPool } from './prepared-statements.ts';

interface Db {
  items: { id: number; label: string };
}

let db: Kysely<Db>;
let drop: () => Promise<void>;

beforeAll(async () => {
  const tdb = await freshDatabase('prepared');
  drop = tdb.drop;
  // One connection: what is prepared on it is what the next statement finds.
  db = createDb<Db>({ url: tdb.url, applicationName: 'prepared-test', max: 1 });
  // Several commands in one text, no parameters: the simple protocol, as migrations need.
  await sql`create table items (id int primary key, label text not null); insert into items values (1, 'one'), (2, 'two')`.execute(
    db,
  );
});
afterAll(async () => {
  await db.destroy();
  await drop();
});

/**
 * A one-connection pool of its own, listening for errors as `createDb`'s does: a connection the
 * preparing pool retires is closed without being awaited, and the database dropped after the
 * test terminates it while it closes; unheard, that error would be an uncaught exception.
 */
function ownPool(url: string): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

const preparedTexts = async () =>
  (await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(db)).rows.map(
    (r) => r.statement,
  );

describe('prepared statements', () => {
  it('prepares a parameterised statement on its second run, and answers the same rows', async () => {
    const byId = (id: number) => db.selectFrom('items').select(['id', 'label']).where('id', '=', id);
    const text = byId(1).compile().sql;
    expect(await byId(1).execute()).toEqual([{ id: 1, label: 'one' }]);
    expect(await preparedTexts()).not.toContain(text);
    expect(await byId(2).execute()).toEqual([{ id: 2, label: 'two' }]);
    expect(await preparedTexts()).toContain(text);
    expect(await byId(1).execute()).toEqual([{ id: 1, label: 'one' }]);
  });

  it('leaves a statement without parameters unprepared however often it runs', async () => {
    for (let i = 0; i < 3; i++) await sql`select count(*) from items`.execute(db);
    expect((await preparedTexts()).some((t) => t.includes('count(*)'))).toBe(false);
  });

  it('leaves a long text unprepared (a batch statement whose size grows with the batch)', async () => {
    const long = sql<{ v: number }>`select ${1}::int as v /* ${sql.raw('x'.repeat(9_000))} */`;
    for (let i = 0; i < 3; i++) expect((await long.execute(db)).rows).toEqual([{ v: 1 }]);
    expect((await preparedTexts()).some((t) => t.includes('xxxx'))).toBe(false);
  });

  it('prepares at most 100 statements per connection and runs the others unnamed', async () => {
    for (let n = 0; n < 120; n++)
      for (let run = 0; run < 2; run++) {
        const rows = await sql<{
          v: number;
        }>`select ${n}::int + ${run}::int as v, ${sql.lit(n)} as n`.execute(db);
        expect(rows.rows[0]?.v).toBe(n + run);
      }
    expect((await preparedTexts()).length).toBe(100);
  });

  it('retires a full connection that keeps running hot texts unnamed, so they are prepared again', async () => {
    const tdb = await freshDatabase('prepared_retire');
    const pool = ownPool(tdb.url);
    const own = new Kysely<Db>({
      dialect: new PostgresDialect({
        pool: preparingPool(pool, {
          perConnection: 2,
          retireAfterMisses: 3,
          hotAfter: 2,
          minConnectionAgeMs: 0,
        }),
      }),
    });
    const backend = async () =>
      (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(own)).rows[0]?.pid;
    const text = (n: number) => sql<{ v: number }>`select ${n}::int as v, ${sql.lit(n)} as shape`;
    // Two one-off shapes take both slots.
    for (const n of [1, 2]) for (let run = 0; run < 2; run++) await text(n).execute(own);
    const first = await backend();
    // A third shape recurs and finds no slot: after three misses the connection is retired.
    for (let run = 0; run < 4; run++) expect((await text(3).execute(own)).rows).toEqual([{ v: 3, shape: 3 }]);
    expect(await backend()).not.toBe(first);
    await text(3).execute(own);
    const names = (
      await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(own)
    ).rows;
    expect(names.some((r) => r.statement.includes('as shape') && r.statement.includes('3'))).toBe(true);
    await own.destroy();
    await tdb.drop();
  });

  it('keeps a full connection while the texts it misses are not hot, or while it is young', async () => {
    const tdb = await freshDatabase('prepared_keep');
    const connectionOf = async (opts: PreparedStatementOptions) => {
      const own = new Kysely<Db>({
        dialect: new PostgresDialect({
          pool: preparingPool(ownPool(tdb.url), {
            perConnection: 1,
            retireAfterMisses: 2,
            ...opts,
          }),
        }),
      });
      const backend = async () =>
        (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(own)).rows[0]?.pid;
      const text = (n: number) => sql<{ v: number }>`select ${n}::int as v, ${sql.lit(n)} as shape`;
      for (let run = 0; run < 2; run++) await text(1).execute(own);
      const first = await backend();
      for (let run = 0; run < 6; run++) await text(2).execute(own);
      const same = (await backend()) === first;
      await own.destroy();
      return same;
    };
    // Missed five times, but not hot yet (hot after ten runs).
    expect(await connectionOf({ hotAfter: 10, minConnectionAgeMs: 0 })).toBe(true);
    // Hot and missed, but the connection is younger than the minimum age.
    expect(await connectionOf({ hotAfter: 2, minConnectionAgeMs: 60_000 })).toBe(true);
    // Both: retired.
    expect(await connectionOf({ hotAfter: 2, minConnectionAgeMs: 0 })).toBe(false);
    await tdb.drop();
  });

  it('runs a statement unnamed once its prepared plan no longer fits the table', async () => {
    // The cap of the test above is reached; a fresh pool prepares again.
    const tdb = await freshDatabase('prepared_change');
    const own = createDb<Db>({ url: tdb.url, applicationName: 'prepared-change', max: 1 });
    await sql`create table items (id int primary key, label text not null); insert into items values (1, 'one')`.execute(
      own,
    );
    const all = () => own.selectFrom('items').selectAll().where('id', '>', 0).execute();
    await all();
    await all();
    await sql`alter table items add column extra text`.execute(own);
    // PostgreSQL refuses the prepared plan whose columns changed; outside a transaction the
    // statement runs again unnamed at once, and unnamed from then on.
    expect(await all()).toEqual([{ id: 1, label: 'one', extra: null }]);
    await sql`alter table items add column more text`.execute(own);
    expect(await all()).toEqual([{ id: 1, label: 'one', extra: null, more: null }]);
    // Inside a transaction the refusal aborts it: the caller sees it, as any failure.
    const byLabel = () => own.selectFrom('items').selectAll().where('label', '=', 'one').execute();
    await byLabel();
    await byLabel();
    await sql`alter table items add column last text`.execute(own);
    await expect(
      own
        .transaction()
        .execute((trx) => trx.selectFrom('items').selectAll().where('label', '=', 'one').execute()),
    ).rejects.toMatchObject({ code: '0A000' });
    expect(await byLabel()).toHaveLength(1);
    await own.destroy();
    await tdb.drop();
  });

  it('can be turned off', async () => {
    const tdb = await freshDatabase('prepared_off');
    const off = createDb<Db>({
      url: tdb.url,
      applicationName: 'prepared-off',
      max: 1,
      preparedStatements: false,
    });
    for (let i = 0; i < 3; i++) await sql`select ${i}::int as v`.execute(off);
    expect((await sql`select name from pg_prepared_statements`.execute(off)).rows).toEqual([]);
    await off.destroy();
    await tdb.drop();
  });
});
