import type { Logger } from '@switchboard/kit';
import { type Kysely, sql } from 'kysely';
import type { FanoutDatabase, NewAttempt } from '../db.ts';

export interface AttemptLog {
  /**
   * Queues one attempt and resolves once it is committed. The engine acknowledges an event
   * only after this, so a worker killed between a delivery and its log entry delivers again
   * (same `webhook-id`) and logs it, instead of leaving a delivery nobody can see.
   */
  record(entry: NewAttempt): Promise<void>;
  /** Writes everything queued so far. */
  flush(): Promise<void>;
  /** Flushes and stops. */
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
export async function insertAttempts(
  db: Kysely<FanoutDatabase>,
  batch: readonly NewAttempt[],
): Promise<void> {
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

interface Queued {
  readonly entry: NewAttempt;
  readonly done: () => void;
}

/**
 * Group commit: an entry is written at once when no write is running, otherwise with every
 * entry that arrived meanwhile in the next multi-row insert, so a burst of deliveries costs a
 * few inserts and a quiet moment costs no waiting. When the database refuses a batch, the
 * batch is tried again every `flushIntervalMs` until it is stored; the deliveries waiting
 * for it stay unacknowledged (and hold their webhook's slots) until then, which is the price
 * of never losing an entry.
 */
export function createAttemptLog(opts: {
  db: Kysely<FanoutDatabase>;
  log: Logger;
  flushIntervalMs: number;
  maxBatch: number;
}): AttemptLog {
  let buffer: Queued[] = [];
  let flushing: Promise<void> | undefined;
  let retryTimer: NodeJS.Timeout | undefined;
  let stopped = false;

  async function writeAll(): Promise<void> {
    while (buffer.length > 0) {
      const batch = buffer.splice(0, opts.maxBatch);
      try {
        await insertAttempts(
          opts.db,
          batch.map((q) => q.entry),
        );
      } catch (err) {
        buffer = batch.concat(buffer);
        opts.log.warn({ err, queued: buffer.length }, 'attempt log write failed; will retry');
        if (!stopped) {
          clearTimeout(retryTimer);
          retryTimer = setTimeout(() => {
            retryTimer = undefined;
            void flush();
          }, opts.flushIntervalMs);
        }
        return;
      }
      for (const q of batch) q.done();
    }
  }

  function flush(): Promise<void> {
    if (!flushing) {
      flushing = writeAll().finally(() => {
        flushing = undefined;
        // Entries that arrived during the write go out now, unless a retry is scheduled.
        if (buffer.length > 0 && !retryTimer && !stopped) void flush();
      });
    }
    return flushing;
  }

  return {
    record(entry) {
      return new Promise<void>((resolve) => {
        buffer.push({ entry, done: resolve });
        if (!retryTimer) void flush();
      });
    },
    async flush() {
      await flush();
      if (buffer.length > 0) await flush();
    },
    async stop() {
      await flush();
      if (buffer.length > 0) await flush();
      stopped = true;
      clearTimeout(retryTimer);
    },
    get pending() {
      return buffer.length;
    },
  };
}
