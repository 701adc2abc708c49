import type { Logger } from '@switchboard/kit';
import { type Kysely, sql } from 'kysely';
import type { FanoutDatabase, NewAttempt } from '../db.ts';

export interface AttemptLog {
  /** Queues one attempt; never waits for the database. */
  record(entry: NewAttempt): void;
  /** Writes everything queued so far. */
  flush(): Promise<void>;
  /** Flushes and stops the timer. */
  stop(): Promise<void>;
  readonly pending: number;
}

// PostgreSQL text cannot hold NUL, and one such response would fail its whole batch.
const clean = (v: string | null | undefined): string | null => (v == null ? null : v.replaceAll('\0', ''));
const time = (v: Date | string | null | undefined): Date | null =>
  v == null ? null : v instanceof Date ? v : new Date(v);

/**
 * One statement with fifteen array parameters, whatever the batch size: building and parsing
 * a VALUES list of thousands of parameters cost more CPU than the deliveries it logged.
 */
async function insertBatch(db: Kysely<FanoutDatabase>, batch: readonly NewAttempt[]): Promise<void> {
  const col = <T>(pick: (a: NewAttempt) => T): T[] => batch.map(pick);
  await sql`
    insert into webhook_attempts (
      webhook_id, event_id, message_id, attempt, trigger, url, success, status_code, duration_ms,
      error_class, error, response_excerpt, next_attempt_at, dead_lettered, attempted_at
    )
    select * from unnest(
      ${col((a) => a.webhook_id)}::uuid[],
      ${col((a) => clean(a.event_id))}::text[],
      ${col((a) => a.message_id)}::text[],
      ${col((a) => a.attempt)}::int[],
      ${col((a) => a.trigger)}::text[],
      ${col((a) => clean(a.url))}::text[],
      ${col((a) => a.success)}::bool[],
      ${col((a) => a.status_code ?? null)}::int[],
      ${col((a) => a.duration_ms)}::int[],
      ${col((a) => a.error_class ?? null)}::text[],
      ${col((a) => clean(a.error))}::text[],
      ${col((a) => clean(a.response_excerpt))}::text[],
      ${col((a) => time(a.next_attempt_at))}::timestamptz[],
      ${col((a) => a.dead_lettered)}::bool[],
      ${col((a) => time(a.attempted_at))}::timestamptz[]
    )
  `.execute(db);
}

/**
 * The attempt log is written in multi-row inserts on a timer, so a burst of deliveries costs a
 * few inserts instead of one per attempt and a slow database never slows delivery. When the
 * database is down, entries wait (up to `maxBuffered`, oldest dropped first) and go out later.
 */
export function createAttemptLog(opts: {
  db: Kysely<FanoutDatabase>;
  log: Logger;
  flushIntervalMs: number;
  maxBatch: number;
  maxBuffered: number;
}): AttemptLog {
  let buffer: NewAttempt[] = [];
  let flushing: Promise<void> | undefined;
  let dropped = 0;

  async function writeAll(): Promise<void> {
    while (buffer.length > 0) {
      const batch = buffer.splice(0, opts.maxBatch);
      try {
        await insertBatch(opts.db, batch);
      } catch (err) {
        buffer = batch.concat(buffer);
        trim();
        opts.log.warn({ err, queued: buffer.length }, 'attempt log write failed; will retry');
        return;
      }
    }
    if (dropped > 0) {
      opts.log.warn({ dropped }, 'attempt log entries dropped while the database was unavailable');
      dropped = 0;
    }
  }

  function trim(): void {
    const excess = buffer.length - opts.maxBuffered;
    if (excess > 0) {
      buffer.splice(0, excess);
      dropped += excess;
    }
  }

  function flush(): Promise<void> {
    if (!flushing) {
      flushing = writeAll().finally(() => {
        flushing = undefined;
      });
    }
    return flushing;
  }

  const timer = setInterval(() => {
    if (buffer.length > 0) void flush();
  }, opts.flushIntervalMs);
  timer.unref();

  return {
    record(entry) {
      buffer.push(entry);
      trim();
      if (buffer.length >= opts.maxBatch) void flush();
    },
    async flush() {
      // A flush already running may have started before the newest entries: run one more.
      await flush();
      if (buffer.length > 0) await flush();
    },
    async stop() {
      clearInterval(timer);
      await flush();
      if (buffer.length > 0) await flush();
    },
    get pending() {
      return buffer.length;
    },
  };
}
