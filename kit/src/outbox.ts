import { type Kysely, sql } from 'kysely';
import type { Logger } from 'pino';

/**
 * A transactional outbox: a service writes the messages a change must announce into its own
 * outbox table in the change's transaction, and a relay publishes them afterwards. The change
 * and its announcement commit together or not at all, and an outage of the message bus of any
 * length delays announcements without losing one.
 */

/** One message for the bus: the contract's name, its payload, and the key that de-duplicates it. */
export interface OutboxMessage {
  readonly contract: string;
  readonly payload: unknown;
  /** Becomes `Nats-Msg-Id`: a message published twice (relay crash after publish) is stored once. */
  readonly key: string;
}

interface OutboxRow {
  id: number;
  contract: string;
  payload: unknown;
  key: string;
}

const TABLE_NAME = /^[a-z_]+_outbox$/;

function table(name: string) {
  if (!TABLE_NAME.test(name)) throw new Error(`outbox table "${name}" must be <service>_outbox`);
  return sql.table(name);
}

/** The migration body that creates a service's outbox table. */
export async function createOutboxTable(db: Kysely<unknown>, name: string): Promise<void> {
  await sql`create table ${table(name)} (
    id bigserial primary key,
    contract text not null,
    payload jsonb not null,
    key text not null,
    created_at timestamptz not null default now()
  )`.execute(db);
}

/** Writes messages in the caller's transaction; they are published after it commits. */
export async function enqueueOutbox<DB>(
  /** The change's transaction (a Transaction is a Kysely). */
  trx: Kysely<DB>,
  name: string,
  messages: readonly OutboxMessage[],
): Promise<void> {
  if (!messages.length) return;
  const values = messages.map((m) => sql`(${m.contract}, ${JSON.stringify(m.payload)}::jsonb, ${m.key})`);
  await sql`insert into ${table(name)} (contract, payload, key) values ${sql.join(values)}`.execute(trx);
}

export interface OutboxRelay {
  /** Starts the relay: it publishes what is waiting now and then polls. */
  start(): void;
  /** Something was just committed: publish it without waiting for the next poll. */
  kick(): void;
  /** Publishes everything waiting now; rejects if the bus or the database refuses. */
  drain(): Promise<number>;
  /**
   * Publishes what was just committed before the caller answers, when the bus allows within
   * `timeoutMs`; otherwise the relay keeps trying in the background and this returns anyway.
   */
  publishSoon(timeoutMs: number): Promise<void>;
  /** Stops polling after a last attempt to publish what is waiting. */
  stop(): Promise<void>;
}

export interface OutboxRelayOptions<DB> {
  db: Kysely<DB>;
  table: string;
  publish(message: OutboxMessage): Promise<void>;
  log: Logger;
  /** Picks up messages other processes (or a crashed one) left behind. */
  pollIntervalMs?: number;
  batchSize?: number;
  /** Longest pause between attempts while the bus or the database is down. */
  maxBackoffMs?: number;
}

/**
 * Publishes the outbox in id order, a batch at a time, each batch under `for update skip
 * locked` so several processes of a service relay without publishing the same row together;
 * rows are deleted in the transaction that published them. A failure rolls the batch back and
 * the relay tries again with capped exponential backoff.
 */
export function createOutboxRelay<DB>(opts: OutboxRelayOptions<DB>): OutboxRelay {
  const db = opts.db as unknown as Kysely<unknown>;
  const name = table(opts.table);
  const batchSize = opts.batchSize ?? 100;
  const pollIntervalMs = opts.pollIntervalMs ?? 1_000;
  const maxBackoffMs = opts.maxBackoffMs ?? 30_000;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<number> | undefined;
  let again = false;
  let failures = 0;
  let stopped = true;

  async function publishBatch(): Promise<number> {
    return db.transaction().execute(async (trx) => {
      const { rows } = await sql<OutboxRow>`
        select id, contract, payload, key from ${name}
        order by id limit ${batchSize} for update skip locked`.execute(trx);
      for (const row of rows) {
        await opts.publish({ contract: row.contract, payload: row.payload, key: row.key });
      }
      if (rows.length) {
        await sql`delete from ${name} where id = any(${rows.map((r) => r.id)}::bigint[])`.execute(trx);
      }
      return rows.length;
    });
  }

  async function drainAll(): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await publishBatch();
      total += n;
      if (n < batchSize) return total;
    }
  }

  function drain(): Promise<number> {
    if (running) {
      again = true;
      return running;
    }
    running = drainAll().finally(() => {
      running = undefined;
    });
    return running;
  }

  function schedule(delayMs: number): void {
    if (stopped) return;
    clearTimeout(timer);
    timer = setTimeout(tick, delayMs);
    timer.unref();
  }

  function tick(): void {
    drain().then(
      () => {
        if (failures > 0) opts.log.info({ table: opts.table }, 'outbox relay publishing again');
        failures = 0;
        const now = again;
        again = false;
        schedule(now ? 0 : pollIntervalMs);
      },
      (err: unknown) => {
        failures++;
        // One line per streak, then quiet until it recovers.
        if (failures === 1)
          opts.log.warn({ err, table: opts.table }, 'outbox relay cannot publish; retrying');
        schedule(Math.min(maxBackoffMs, 100 * 2 ** Math.min(failures, 12)));
      },
    );
  }

  return {
    start() {
      stopped = false;
      schedule(0);
    },
    kick() {
      if (stopped) return;
      if (failures > 0) return; // the backoff timer owns the next attempt
      if (running) again = true;
      else schedule(0);
    },
    drain,
    async publishSoon(timeoutMs) {
      if (stopped) return;
      let timer: NodeJS.Timeout | undefined;
      const waited = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, timeoutMs);
      });
      // A drain already running may have read the table before this commit: run one after it.
      const published = (running ?? Promise.resolve(0))
        .catch(() => 0)
        .then(() => drain())
        .then(
          () => undefined,
          () => {
            // The poll (with its backoff) owns the retry.
            if (failures === 0) schedule(0);
          },
        );
      await Promise.race([published, waited]);
      clearTimeout(timer);
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running?.catch(() => undefined);
      await drain().catch((err: unknown) =>
        opts.log.warn({ err, table: opts.table }, 'outbox left unpublished at stop; published after restart'),
      );
    },
  };
}
