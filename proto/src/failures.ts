/**
 * Whether a failure can pass by itself. Decided by the error's class, never by its message
 * alone: PostgreSQL SQLSTATE classes, Node's socket error codes and NATS client error names.
 *
 * - `transient`: the database or NATS is down, slow or restarting, a connection broke, a
 *   transaction lost a serialization race or a deadlock. Retrying later succeeds.
 * - `permanent`: the input itself cannot be processed (a data exception, a constraint the
 *   data breaks, a schema the payload fails) or the code has a bug (TypeError and friends).
 *   Retrying gives the same result.
 * - `unknown`: anything else; retried a few times, then treated as permanent.
 */
export type FailureClass = 'transient' | 'permanent' | 'unknown';

export interface ClassifiedFailure {
  readonly class: FailureClass;
  /** SQLSTATE, socket error code or error name: what the decision was based on. */
  readonly code: string | null;
  readonly message: string;
  /**
   * The connection to a dependency is lost, or the dependency itself is (shut down,
   * restarting, unreachable), anywhere in the error's chain: other work sent the same way fails
   * too until it is back. A deadlock, a serialization race or a statement timeout is not: they
   * are the failed work's own.
   */
  readonly lostConnection: boolean;
}

const TRANSIENT_SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ESOCKETTIMEDOUT',
]);

/** NATS client errors that mean the connection itself is gone (or going). */
const NATS_CONNECTION_NAMES = new Set([
  'ClosedConnectionError',
  'DrainingConnectionError',
  'ConnectionError',
]);

/** NATS client errors that mean "not now" (`@nats-io/nats-core`, `@nats-io/jetstream` names). */
const TRANSIENT_NATS_NAMES = new Set([
  ...NATS_CONNECTION_NAMES,
  'TimeoutError',
  'NoResponders',
  'NoRespondersError',
  'RequestError',
  'JetStreamNotEnabled',
]);

/** Programming errors: the same input fails the same way every time. */
const BUG_NAMES = new Set(['TypeError', 'RangeError', 'ReferenceError', 'SyntaxError', 'URIError']);

/** Validation failures (zod, the bus's contract checks): the payload will never match. */
const VALIDATION_NAMES = new Set(['ZodError', '$ZodError', 'BusValidationError']);

/**
 * node-postgres reports a lost or unobtainable connection without a SQLSTATE; these are its
 * own messages for that (pool checkout timeout, a socket closed under a query).
 */
const PG_CONNECTION_MESSAGES =
  /connection terminated|timeout exceeded when trying to connect|not queryable|connection error|cannot use a pool after calling end|server closed the connection|the database system is (starting up|shutting down|in recovery mode)/i;

const SQLSTATE = /^[0-9A-Z]{5}$/;
const CACHED_PLAN_CHANGED = /cached plan must not change result type/i;

function sqlstateClass(code: string): FailureClass {
  const cls = code.slice(0, 2);
  // Connection exception; operator intervention (admin/crash shutdown, cannot connect now,
  // query cancelled by a statement timeout); insufficient resources; system (I/O) errors.
  if (cls === '08' || cls === '53' || cls === '58') return 'transient';
  if (code.startsWith('57P') || code === '57014') return 'transient';
  // Serialization failure, deadlock, statement completion unknown.
  if (code === '40001' || code === '40P01' || code === '40003') return 'transient';
  // Lock not available (lock_timeout / NOWAIT).
  if (code === '55P03') return 'transient';
  // Data exception; integrity constraint violation (expected conflicts are handled where they
  // happen, with ON CONFLICT); program limit exceeded (a value too large for an index row);
  // feature not supported.
  if (cls === '22' || cls === '23' || cls === '54' || cls === '0A') return 'permanent';
  return 'unknown';
}

function asRecord(v: unknown): Record<string, unknown> | null {
  return v !== null && typeof v === 'object' ? (v as Record<string, unknown>) : null;
}

interface Classified {
  class: FailureClass;
  code: string | null;
  lostConnection: boolean;
}

function classifyOne(err: unknown): Classified | null {
  const e = asRecord(err);
  if (!e) return null;
  const name = typeof e.name === 'string' ? e.name : '';
  const code = typeof e.code === 'string' ? e.code : null;
  const message = typeof e.message === 'string' ? e.message : '';
  const transient = (c: string | null, lostConnection: boolean): Classified => ({
    class: 'transient',
    code: c,
    lostConnection,
  });
  // node-postgres DatabaseError (and anything else carrying a SQLSTATE and a severity).
  if (code && SQLSTATE.test(code) && (name === 'error' || name === 'DatabaseError' || 'severity' in e)) {
    // A prepared statement whose result columns a migration changed: the statement runs
    // unnamed from then on (kit's prepared-statements.ts), so the transaction it aborted
    // succeeds when run again.
    if (isCachedPlanChanged(err)) return transient(code, false);
    // Connection exception; admin or crash shutdown, cannot connect now.
    const lost = code.startsWith('08') || /^57P0[123]$/.test(code);
    return { class: sqlstateClass(code), code, lostConnection: lost };
  }
  if (code && TRANSIENT_SOCKET_CODES.has(code)) return transient(code, true);
  if (TRANSIENT_NATS_NAMES.has(name)) return transient(name, NATS_CONNECTION_NAMES.has(name));
  // JetStream answered 503 (no quorum, stream leader moving) or 408 (request timed out).
  if (name === 'JetStreamApiError' && (e.status === 503 || e.status === 408)) return transient(name, false);
  if (PG_CONNECTION_MESSAGES.test(message)) return transient(code ?? name ?? null, true);
  if (VALIDATION_NAMES.has(name)) return { class: 'permanent', code: name, lostConnection: false };
  if (BUG_NAMES.has(name)) return { class: 'permanent', code: name, lostConnection: false };
  return null;
}

/**
 * A named prepared statement whose result columns a migration changed (SQLSTATE 0A000 "cached
 * plan must not change result type"): kit runs its text unnamed from then on.
 */
export function isCachedPlanChanged(err: unknown): boolean {
  const e = asRecord(err);
  return (
    e !== null && e.code === '0A000' && typeof e.message === 'string' && CACHED_PLAN_CHANGED.test(e.message)
  );
}

/** The errors an error wraps (`cause`, `AggregateError.errors`), the error itself first. */
function chain(err: unknown): unknown[] {
  const out: unknown[] = [];
  const queue: unknown[] = [err];
  while (queue.length && out.length < 16) {
    const e = queue.shift();
    if (e === undefined || e === null || out.includes(e)) continue;
    out.push(e);
    const r = asRecord(e);
    if (!r) continue;
    if (r.cause !== undefined) queue.push(r.cause);
    if (Array.isArray(r.errors)) queue.push(...r.errors);
  }
  return out;
}

export function classifyFailure(err: unknown): ClassifiedFailure {
  const message = err instanceof Error ? err.message : String(err);
  const found = chain(err).flatMap((e) => {
    const c = classifyOne(e);
    return c ? [c] : [];
  });
  // A wrapper around a lost connection (undici's "fetch failed" TypeError, a pool error) is
  // as transient as its cause: transient anywhere in the chain wins.
  const pick =
    found.find((c) => c.class === 'transient') ?? found.find((c) => c.class === 'permanent') ?? found[0];
  const fallbackName = err instanceof Error ? err.name : null;
  return {
    class: pick?.class ?? 'unknown',
    code: pick?.code ?? fallbackName,
    message,
    lostConnection: found.some((c) => c.lostConnection),
  };
}

/**
 * Which dependency a transient failure points at, for the `dependency` of a 503: PostgreSQL
 * (a SQLSTATE or node-postgres' own connection messages), NATS (its client's error names), or
 * for a bare socket error the peer the caller names (request handlers reach only PostgreSQL
 * over their own sockets; NATS reconnects inside its client).
 */
export function failedDependency(f: ClassifiedFailure, socketPeer = 'a dependency'): string {
  if (f.code && (SQLSTATE.test(f.code) || PG_CONNECTION_MESSAGES.test(f.message))) return 'database';
  if (f.code && (TRANSIENT_NATS_NAMES.has(f.code) || f.code === 'JetStreamApiError')) return 'nats';
  if (PG_CONNECTION_MESSAGES.test(f.message)) return 'database';
  // A refused or broken socket: the caller knows which peer its handlers talk to directly.
  if (f.code && TRANSIENT_SOCKET_CODES.has(f.code)) return socketPeer;
  return 'a dependency';
}
