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

/** NATS client errors that mean "not now" (`@nats-io/nats-core`, `@nats-io/jetstream` names). */
const TRANSIENT_NATS_NAMES = new Set([
  'TimeoutError',
  'NoResponders',
  'NoRespondersError',
  'ClosedConnectionError',
  'DrainingConnectionError',
  'ConnectionError',
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

function classifyOne(err: unknown): { class: FailureClass; code: string | null } | null {
  const e = asRecord(err);
  if (!e) return null;
  const name = typeof e.name === 'string' ? e.name : '';
  const code = typeof e.code === 'string' ? e.code : null;
  const message = typeof e.message === 'string' ? e.message : '';
  // node-postgres DatabaseError (and anything else carrying a SQLSTATE and a severity).
  if (code && SQLSTATE.test(code) && (name === 'error' || name === 'DatabaseError' || 'severity' in e)) {
    // A prepared statement whose result columns a migration changed: the statement runs
    // unnamed from then on (kit's prepared-statements.ts), so the transaction it aborted
    // succeeds when run again.
    if (code === '0A000' && CACHED_PLAN_CHANGED.test(message)) return { class: 'transient', code };
    return { class: sqlstateClass(code), code };
  }
  if (code && TRANSIENT_SOCKET_CODES.has(code)) return { class: 'transient', code };
  if (TRANSIENT_NATS_NAMES.has(name)) return { class: 'transient', code: name };
  // JetStream answered 503 (no quorum, stream leader moving) or 408 (request timed out).
  if (name === 'JetStreamApiError' && (e.status === 503 || e.status === 408)) {
    return { class: 'transient', code: name };
  }
  if (PG_CONNECTION_MESSAGES.test(message)) return { class: 'transient', code: code ?? name ?? null };
  if (VALIDATION_NAMES.has(name)) return { class: 'permanent', code: name };
  if (BUG_NAMES.has(name)) return { class: 'permanent', code: name };
  return null;
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
  return { class: pick?.class ?? 'unknown', code: pick?.code ?? fallbackName, message };
}

/**
 * Whether a failure is the loss of the connection to a dependency (or of the dependency
 * itself: shut down, restarting, unreachable), rather than something about the work that
 * failed (a deadlock, a serialization race, a statement timeout). The first fails any other
 * work sent the same way until it is back; the second may not.
 */
export function isConnectionFailure(f: ClassifiedFailure): boolean {
  if (f.class !== 'transient' || f.code === null) return false;
  if (SQLSTATE.test(f.code)) return f.code.startsWith('08') || /^57P0[123]$/.test(f.code);
  return (
    TRANSIENT_SOCKET_CODES.has(f.code) ||
    PG_CONNECTION_MESSAGES.test(f.message) ||
    f.code === 'ClosedConnectionError' ||
    f.code === 'DrainingConnectionError' ||
    f.code === 'ConnectionError'
  );
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
