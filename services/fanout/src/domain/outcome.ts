import { BLOCKED_ADDRESS_CODE } from '@switchboard/kit';
import { parseRetryAfter } from '@switchboard/proto';
import type { FailureHints } from './retry.ts';

export type ErrorClass =
  | 'http_status'
  | 'timeout'
  | 'connection'
  | 'dns'
  | 'tls'
  | 'blocked_address'
  | 'other';

/** What one HTTP attempt produced, before any decision. */
export type AttemptResult =
  | {
      kind: 'response';
      status: number;
      retryAfter: string | undefined;
      excerpt: string;
      durationMs: number;
    }
  | { kind: 'error'; errorClass: Exclude<ErrorClass, 'http_status'>; message: string; durationMs: number };

export type Classified =
  | { kind: 'success' }
  /** 410: the receiver says the endpoint is gone for good; the webhook is disabled. */
  | { kind: 'gone'; errorClass: 'http_status' }
  | ({ kind: 'failure'; errorClass: ErrorClass } & FailureHints);

export function classify(result: AttemptResult, nowMs: number): Classified {
  if (result.kind === 'error') {
    return {
      kind: 'failure',
      errorClass: result.errorClass,
      throttled: result.errorClass === 'timeout',
      retryAfterMs: undefined,
    };
  }
  if (result.status >= 200 && result.status < 300) return { kind: 'success' };
  if (result.status === 410) return { kind: 'gone', errorClass: 'http_status' };
  return {
    kind: 'failure',
    errorClass: 'http_status',
    throttled: result.status === 429,
    retryAfterMs: parseRetryAfter(result.retryAfter, nowMs),
  };
}

export { BLOCKED_ADDRESS_CODE };

const TIMEOUT_CODES = new Set([
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'ETIMEDOUT',
  'ESOCKETTIMEDOUT',
]);
const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NODATA', 'EAI_NONAME']);
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'ENETDOWN',
  'EPIPE',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
]);

function codeOf(err: unknown): string | undefined {
  if (!err || typeof err !== 'object') return undefined;
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}

function nameOf(err: unknown): string | undefined {
  if (!err || typeof err !== 'object') return undefined;
  const name = (err as { name?: unknown }).name;
  return typeof name === 'string' ? name : undefined;
}

/** The error and what it wraps (`cause`, the members of an AggregateError), outermost first. */
function chain(err: unknown): unknown[] {
  const out: unknown[] = [];
  const queue: unknown[] = [err];
  while (queue.length && out.length < 10) {
    const e = queue.shift();
    if (!e || typeof e !== 'object' || out.includes(e)) continue;
    out.push(e);
    const { cause, errors } = e as { cause?: unknown; errors?: unknown };
    if (cause) queue.push(cause);
    if (Array.isArray(errors)) queue.push(...errors);
  }
  return out;
}

/** Names the failure of a request that got no HTTP response. */
export function errorClassOf(err: unknown): Exclude<ErrorClass, 'http_status'> {
  const links = chain(err);
  const codes = links.map(codeOf).filter((c): c is string => c !== undefined);
  const names = links.map(nameOf);
  if (codes.includes(BLOCKED_ADDRESS_CODE)) return 'blocked_address';
  if (names.includes('TimeoutError') || codes.some((c) => TIMEOUT_CODES.has(c))) return 'timeout';
  if (codes.some((c) => DNS_CODES.has(c))) return 'dns';
  if (codes.some((c) => /^(ERR_TLS|ERR_SSL|CERT_|UNABLE_TO_|DEPTH_ZERO|SELF_SIGNED|ERR_OSSL)/.test(c)))
    return 'tls';
  if (codes.some((c) => CONNECTION_CODES.has(c))) return 'connection';
  return 'other';
}

/** A short, secret-free description for the attempt log. */
export function describeError(err: unknown): string {
  const first = chain(err)
    .map((e) => [codeOf(e), e instanceof Error ? e.message : undefined].filter(Boolean).join(': '))
    .find((s) => s.length > 0);
  return (first ?? String(err)).slice(0, 500);
}
