import { freshDatabase } from '@switchboard/testkit';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { createDb, isUniqueViolation, type Migration, migrate } from './db.ts';

describe('migrate', () => {
  it('applies each migration once when two processes start at the same time', async () => {
    const tdb = await freshDatabase('migrate');
    const migrations: Migration[] = [
      {
        name: '0001_counter',
        async up(db) {
          await sql`create table counter (n int not null)`.execute(db);
          // Held long enough that a second runner without the lock would interleave.
          await sql`select pg_sleep(0.2)`.execute(db);
          await sql`insert into counter values (1)`.execute(db);
        },
      },
      {
        name: '0002_more',
        async up(db) {
          await sql`insert into counter values (2)`.execute(db);
        },
      },
    ];
    const a = createDb({ url: tdb.url, applicationName: 'migrate-a' });
    const b = createDb({ url: tdb.url, applicationName: 'migrate-b' });
    const [ranA, ranB] = await Promise.all([
      migrate(a, 'probe', migrations),
      migrate(b, 'probe', migrations),
    ]);
    expect([...ranA, ...ranB].sort()).toEqual(['0001_counter', '0002_more']);
    const rows = await sql<{ n: number }>`select n from counter order by n`.execute(a);
    expect(rows.rows.map((r) => r.n)).toEqual([1, 2]);
    expect(await migrate(a, 'probe', migrations)).toEqual([]);
    await a.destroy();
    await b.destroy();
    await tdb.drop();
  });

  it('rolls back a failing migration and leaves it pending', async () => {
    const tdb = await freshDatabase('migrate_fail');
    const db = createDb({ url: tdb.url, applicationName: 'migrate-fail' });
    const broken: Migration = {
      name: '0001_broken',
      async up(d) {
        await sql`create table half (id int)`.execute(d);
        await sql`select no_such_function()`.execute(d);
      },
    };
    await expect(migrate(db, 'probe', [broken])).rejects.toThrow();
    const exists = await sql<{ t: string | null }>`select to_regclass('half')::text as t`.execute(db);
    expect(exists.rows[0]?.t).toBeNull();
    await db.destroy();
    await tdb.drop();
  });
});

describe('isUniqueViolation', () => {
  it('tells a unique violation, of the named constraint, from any other failure', async () => {
    const tdb = await freshDatabase('unique');
    const db = createDb({ url: tdb.url, applicationName: 'unique' });
    await sql`create table named (n int constraint named_n_key unique, m int not null)`.execute(db);
    await sql`insert into named values (1, 1)`.execute(db);
    const failure = (statement: ReturnType<typeof sql>) =>
      statement.execute(db).then(
        () => undefined,
        (err: unknown) => err,
      );
    const duplicate = await failure(sql`insert into named values (1, 2)`);
    const nullInNotNull = await failure(sql`insert into named values (2, null)`);
    expect(isUniqueViolation(duplicate)).toBe(true);
    expect(isUniqueViolation(duplicate, 'named_n_key')).toBe(true);
    expect(isUniqueViolation(duplicate, 'other_key')).toBe(false);
    expect(isUniqueViolation(nullInNotNull)).toBe(false);
    expect(isUniqueViolation(new Error('23505'))).toBe(false);
    await db.destroy();
    await tdb.drop();
  });
});
