import { createHash } from 'node:crypto';
import { isCachedPlanChanged } from '@switchboard/proto';
import type { PostgresCursor, PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';
import type pg from 'pg';

/**
 * Named prepared statements for the statements a service runs again and again.
 *
 * An unnamed statement is parsed, analysed and planned by PostgreSQL on every execution. For the
 * large statements of the hot paths (an inbound batch folded in one statement of a dozen CTEs, a
 * send accepted in one), planning takes longer than executing: measured on this code, folding
 * one inbound body took 1.44 ms unnamed and 0.78 ms prepared. A statement becomes a named one on
 * a connection once its text has been seen `admitAfter` times in this process (so one-off texts,
 * such as a VALUES list of a size that never recurs, are never prepared), texts longer than
 * `maxTextLength` never are, and at most `perConnection` statements are prepared per connection
 * (PostgreSQL keeps each one's plan in that connection's memory). Statements without parameters
 * keep the simple protocol, which allows several commands in one text (migrations).
 *
 * Behind a pooler that hands a client a different server connection per transaction (PgBouncer
 * in transaction mode before 1.21), named statements break: turn them off there
 * (`DATABASE_PREPARED_STATEMENTS=false`).
 */
export interface PreparedStatementOptions {
  /** Executions of one text in this process before it is prepared. */
  admitAfter?: number;
  /** Prepared statements per connection at the most; later texts run unnamed. */
  perConnection?: number;
  /**
   * A connection whose slots are full and which has run hot texts unnamed this many times
   * (texts run at least `hotAfter` times in this process that found no slot) is closed when
   * released, once it is `minConnectionAgeMs` old, and the pool opens a fresh one. PostgreSQL
   * keeps a statement until its connection ends, and the client library offers no way to forget
   * one, so slots taken by texts that stopped recurring (a batch statement of a size seen
   * twice at start) are given back this way to the statements that run all the time. The age
   * bounds the cost when more texts are hot than a connection has slots: one reconnect per
   * connection and period, not a churn.
   */
  retireAfterMisses?: number;
  /** Runs in this process after which a text counts as hot (a miss of it counts, above). */
  hotAfter?: number;
  /** A connection younger than this is never retired (above). */
  minConnectionAgeMs?: number;
  /**
   * Longer texts run unnamed and are not remembered: they are the batch statements whose size
   * grows with the batch (a shape that rarely recurs, and whose planning the batch's rows
   * share), and a server keeps every prepared plan in the connection's memory.
   */
  maxTextLength?: number;
}

interface Connection {
  /** Names of the statements prepared on it. */
  readonly names: Set<string>;
  /** Runs of hot texts it could not prepare, its slots being full. */
  misses: number;
  readonly wrapper: PostgresPoolClient;
}

/** Texts remembered with their count of executions, the least recently run forgotten first. */
const REMEMBERED_TEXTS = 500;

/** pg's result as Kysely reads it (the same object: Kysely's own pg driver passes it on as is). */
const asKyselyResult = <R>(result: pg.QueryResult): PostgresQueryResult<R> =>
  result as unknown as PostgresQueryResult<R>;

export function preparingPool(pool: pg.Pool, opts: PreparedStatementOptions = {}): PostgresPool {
  const admitAfter = opts.admitAfter ?? 2;
  const perConnection = opts.perConnection ?? 100;
  const retireAfterMisses = opts.retireAfterMisses ?? 100;
  const hotAfter = opts.hotAfter ?? 1_000;
  const minConnectionAgeMs = opts.minConnectionAgeMs ?? 10 * 60_000;
  const maxTextLength = opts.maxTextLength ?? 8 * 1024;
  // Bounded: the oldest texts are forgotten first, so varying texts cannot grow it without end.
  const seen = new Map<string, { times: number; name: string }>();
  const refused = new Set<string>();
  /** What is known of each connection the pool opened, and the one wrapper it is handed out in. */
  const connections = new WeakMap<pg.PoolClient, Connection>();

  function nameFor(connection: Connection, text: string): string | undefined {
    if (text.length > maxTextLength || refused.has(text)) return undefined;
    const { names } = connection;
    const known = seen.get(text);
    const entry = {
      times: (known?.times ?? 0) + 1,
      name: known?.name ?? `sb_${createHash('sha1').update(text).digest('base64url')}`,
    };
    seen.delete(text);
    seen.set(text, entry);
    if (seen.size > REMEMBERED_TEXTS) seen.delete(seen.keys().next().value ?? '');
    if (names.has(entry.name)) return entry.name;
    if (entry.times < admitAfter) return undefined;
    if (names.size >= perConnection) {
      if (entry.times >= hotAfter) connection.misses++;
      return undefined;
    }
    names.add(entry.name);
    return entry.name;
  }

  function wrap(client: pg.PoolClient): PostgresPoolClient {
    const known = connections.get(client);
    if (known) return known.wrapper;
    const openedAt = Date.now();
    // Kysely opens and ends transactions with these texts on the same client.
    let inTransaction = false;
    const track = (text: string) => {
      if (/^\s*(begin|start transaction)\b/i.test(text)) inTransaction = true;
      else if (/^\s*(commit|rollback)\s*$/i.test(text)) inTransaction = false;
    };
    function query<R>(sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>>;
    function query<R>(cursor: PostgresCursor<R>): PostgresCursor<R>;
    function query<R>(
      sqlOrCursor: string | PostgresCursor<R>,
      parameters?: ReadonlyArray<unknown>,
    ): Promise<PostgresQueryResult<R>> | PostgresCursor<R> {
      // createDb configures no cursor, so Kysely never streams through this pool.
      if (typeof sqlOrCursor !== 'string') throw new Error('streaming queries are not configured');
      track(sqlOrCursor);
      const values = [...(parameters ?? [])];
      const name = values.length > 0 ? nameFor(connection, sqlOrCursor) : undefined;
      const unnamed = () => client.query(sqlOrCursor, values);
      const run = name ? client.query({ name, text: sqlOrCursor, values }) : unnamed();
      return run.then(asKyselyResult<R>, (err: unknown) => {
        // Its result columns changed under it (a migration ran meanwhile): that text runs unnamed
        // from then on, and this statement again at once unless a transaction was open (which the
        // error aborted: its caller decides).
        if (!name || !isCachedPlanChanged(err)) throw err;
        refused.add(sqlOrCursor);
        if (inTransaction) throw err;
        return unnamed().then(asKyselyResult<R>);
      });
    }
    const wrapper: PostgresPoolClient = {
      query,
      release: () => {
        // pg-pool closes a client released with an error instead of keeping it.
        if (connection.misses >= retireAfterMisses && Date.now() - openedAt >= minConnectionAgeMs)
          client.release(new Error('prepared statement slots full: connection retired'));
        else client.release();
      },
    };
    const connection: Connection = { names: new Set(), misses: 0, wrapper };
    connections.set(client, connection);
    return wrapper;
  }

  return {
    connect: async () => wrap(await pool.connect()),
    end: () => pool.end(),
  };
}
