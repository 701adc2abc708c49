import { AppError } from '@switchboard/kit';
import { type Kysely, sql } from 'kysely';
import type { GatewayDatabase } from './db.ts';

export interface LimitRule {
  key: string;
  max: number;
}

/**
 * Sliding-window failure counter in PostgreSQL, shared by every gateway process. Throws 429
 * with Retry-After (when the oldest counted failure leaves the window) once a key is over its max.
 */
export function createFailureLimiter(db: Kysely<GatewayDatabase>, windowSeconds: number) {
  async function assertAllowed(rules: LimitRule[]): Promise<void> {
    for (const rule of rules) {
      const row = await db
        .selectFrom('auth_failures')
        .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.min('at').as('oldest')])
        .where('key', '=', rule.key)
        .where('at', '>', sql<Date>`now() - make_interval(secs => ${windowSeconds})`)
        .executeTakeFirstOrThrow();
      if (Number(row.n) >= rule.max) {
        const oldest = row.oldest ? new Date(row.oldest).getTime() : Date.now();
        const retryAfter = Math.max(1, Math.ceil((oldest + windowSeconds * 1000 - Date.now()) / 1000));
        throw new AppError(429, 'too_many_attempts', 'Too many attempts. Try again later.', {
          headers: { 'retry-after': String(retryAfter) },
        });
      }
    }
  }

  async function record(keys: string[]): Promise<void> {
    await db
      .insertInto('auth_failures')
      .values(keys.map((key) => ({ key })))
      .execute();
    // Old rows are never read again; trimming here keeps the table at the size of one window.
    await db
      .deleteFrom('auth_failures')
      .where('at', '<', sql<Date>`now() - make_interval(secs => ${windowSeconds})`)
      .execute();
  }

  async function clear(key: string): Promise<void> {
    await db.deleteFrom('auth_failures').where('key', '=', key).execute();
  }

  return { assertAllowed, record, clear };
}

export type FailureLimiter = ReturnType<typeof createFailureLimiter>;
