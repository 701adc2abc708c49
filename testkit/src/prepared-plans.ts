import { type Kysely, sql } from 'kysely';
import { expect } from 'vitest';

/**
 * Asserts that the one statement on this connection whose text is `like` (and not `notLike`)
 * was prepared once and that PostgreSQL settled on its generic plan: it tries five custom plans
 * before comparing them with the generic one, then keeps the generic plan, unless the custom
 * ones look cheaper (an array parameter in plain sight), in which case it plans every execution.
 * Run the statement a dozen times on `conn` (one connection) first.
 */
export async function expectPlannedOnce<DB>(conn: Kysely<DB>, like: string, notLike?: string): Promise<void> {
  const { rows } = await sql<{ generic_plans: string; custom_plans: string }>`
    select generic_plans, custom_plans from pg_prepared_statements
    where statement like ${like} ${notLike ? sql`and statement not like ${notLike}` : sql``}`.execute(conn);
  // One text whatever the batch size: a VALUES list made one statement per size.
  expect(rows).toHaveLength(1);
  expect(Number(rows[0]?.custom_plans)).toBeLessThanOrEqual(5);
  expect(Number(rows[0]?.generic_plans)).toBeGreaterThan(0);
}
