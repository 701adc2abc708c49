import { ServiceError } from '@switchboard/proto';
import { type Kysely, type RawBuilder, sql } from 'kysely';
import { z } from 'zod';
import type { GatewayDatabase } from './db.ts';

export interface LimitRule {
  key: string;
  max: number;
}

/** Slots taken by `reserve`. Unless released they stay counted: that is how failures are recorded. */
export interface Attempt {
  /** The attempt did not fail: gives its slot back in every window it was counted in. */
  release(): Promise<void>;
}

// Raw SQL rows are not typed by Kysely (`auth_attempts` is only known to this module).
const TakenRow = z.object({ window_start: z.string() });
const WaitRow = z.object({ retry_after: z.number().int() });

/**
 * Fixed-window attempt counters in PostgreSQL (`auth_attempts`), shared by every gateway process.
 * Throws 429 with Retry-After (seconds until the key's window ends) once a key is at its max.
 */
export function createFailureLimiter(db: Kysely<GatewayDatabase>, windowSeconds: number) {
  const windowLength = sql`make_interval(secs => ${windowSeconds})`;
  const expired = (column: RawBuilder<unknown>) => sql`${column} <= now() - ${windowLength}`;

  function tooMany(retryAfter: number): ServiceError {
    return new ServiceError('too_many_attempts', 'Too many attempts. Try again later.', {
      headers: { 'retry-after': String(retryAfter) },
    });
  }

  async function retryAfterFor(conn: Kysely<GatewayDatabase>, key: string): Promise<number> {
    // Computed by PostgreSQL, whose clock set window_start, so skew between the app's clock and
    // the database's cannot distort it. clock_timestamp(), not now(): a transaction that queued
    // behind the one opening the window started before the window did.
    const { rows } = await sql`
      select least(${windowSeconds}, greatest(1,
        ceil(extract(epoch from window_start + ${windowLength} - clock_timestamp()))))::int as retry_after
      from auth_attempts where key = ${key}
    `.execute(conn);
    return rows[0] === undefined ? windowSeconds : WaitRow.parse(rows[0]).retry_after;
  }

  async function trim(): Promise<void> {
    // SKIP LOCKED: a row an attempt is restarting right now is not worth waiting (or deadlocking) for.
    await sql`
      delete from auth_attempts where key in (
        select key from auth_attempts where ${expired(sql`window_start`)} for update skip locked
      )
    `.execute(db);
  }

  /**
   * Takes one slot under every rule, or none: the check and the count are one INSERT ... ON
   * CONFLICT per key, which holds the key's row lock until the transaction ends, so parallel
   * callers queue on it and at most `max` of them get through. A refusal rolls back slots already
   * taken for earlier rules, so being refused never costs a slot.
   */
  async function reserve(rules: LimitRule[]): Promise<Attempt> {
    // Before, not after: a failed trim must not leave a slot taken that the caller never learns of.
    await trim();
    const taken = await db.transaction().execute(async (trx) => {
      const slots: { key: string; windowStart: string }[] = [];
      for (const rule of rules) {
        const old = expired(sql`a.window_start`);
        const { rows } = await sql`
          insert into auth_attempts as a (key, window_start, count) values (${rule.key}, now(), 1)
          on conflict (key) do update set
            window_start = case when ${old} then now() else a.window_start end,
            count = case when ${old} then 1 else a.count + 1 end
          where ${old} or a.count < ${rule.max}
          returning window_start::text as window_start
        `.execute(trx);
        // No row back: the WHERE refused the update, the key is at its max in an open window.
        if (rows[0] === undefined) throw tooMany(await retryAfterFor(trx, rule.key));
        // Kept as text: a JS Date would drop the microseconds release() has to match on.
        slots.push({ key: rule.key, windowStart: TakenRow.parse(rows[0]).window_start });
      }
      return slots;
    });
    return {
      async release() {
        for (const slot of taken) {
          // Only in the window the slot was taken in: a newer window never counted it.
          await sql`
            update auth_attempts set count = count - 1
            where key = ${slot.key} and window_start = ${slot.windowStart}::timestamptz and count > 0
          `.execute(db);
        }
      },
    };
  }

  /** Forgets everything counted for the key. */
  async function clear(key: string): Promise<void> {
    await sql`delete from auth_attempts where key = ${key}`.execute(db);
  }

  return { reserve, clear };
}

export type FailureLimiter = ReturnType<typeof createFailureLimiter>;
