import type { z } from 'zod';
import { issuesText } from './issues.ts';

export type BusDirection = 'publish' | 'consume' | 'request' | 'reply';

/** A payload that does not match its contract, on either side of the bus. */
export class BusValidationError extends Error {
  override readonly name = 'BusValidationError';
  readonly code = 'bus_validation_failed';
  readonly contract: string;
  readonly direction: BusDirection;
  readonly issues: readonly z.core.$ZodIssue[];

  constructor(contract: string, direction: BusDirection, issues: readonly z.core.$ZodIssue[]) {
    super(`${direction} of ${contract} failed validation: ${issuesText(issues)}`);
    this.contract = contract;
    this.direction = direction;
    this.issues = issues;
  }
}

/**
 * Every stable error code the inbox answers, with its HTTP status and default sentence, in one
 * table (Fastify's own error-code table is the model). Services throw `ServiceError` with one of
 * these codes; the gateway's one mapper turns it into the inbox body `{code, reason, fields?}`.
 * A test walks this table and checks each code's status against what the endpoints answer.
 */
// biome-ignore format: a table reads best one code a line
export const errorCatalogue = {
  validation_error: { status: 400, message: 'The request is not valid.' },
  invalid_json: { status: 400, message: 'The body is not valid JSON.' },
  invalid_payload: { status: 400, message: 'The body must be a JSON object.' },
  invalid_content_length: { status: 400, message: 'The Content-Length does not match the body.' },
  bad_request: { status: 400, message: 'The request is not valid.' },
  invalid_credentials: { status: 400, message: 'Unable to log in with provided credentials.' },
  not_authenticated: { status: 401, message: 'Authentication credentials were not provided.' },
  invalid_token: { status: 401, message: 'Invalid token.' },
  invalid_refresh_token: { status: 401, message: 'The refresh token is invalid, used or expired.' },
  invalid_signature: { status: 401, message: 'X-Hub-Signature-256 is missing or does not match the body.' },
  permission_denied: { status: 403, message: 'You do not have permission to perform this action.' },
  configurator_not_allowed: { status: 403, message: 'The configurator user cannot use messaging endpoints.' },
  configurator_protected: { status: 403, message: 'The configurator user is managed by the partner provisioning.' },
  cannot_change_own_rights: { status: 403, message: 'You cannot change your own rights; ask another admin.' },
  role_change_not_allowed: { status: 403, message: 'Only admins change the role of a user.' },
  verify_token_mismatch: { status: 403, message: 'The verify token does not match.' },
  not_found: { status: 404, message: 'Not found.' },
  seat_limit_reached: { status: 409, message: 'All seats are taken.' },
  cannot_delete_self: { status: 409, message: 'You cannot delete your own user.' },
  username_taken: { status: 409, message: 'The username belongs to another user.' },
  webhook_disabled: { status: 409, message: 'Enable the webhook first.' },
  not_redrivable: { status: 409, message: 'There is no body to re-drive.' },
  already_tagged: { status: 409, message: 'It already has this tag.' },
  tag_name_taken: { status: 409, message: 'Another tag has this name.' },
  block_refused: { status: 409, message: 'The network refused to block this customer.' },
  not_a_chat_export: { status: 400, message: 'chat_text is not an exported chat: no line starts with a message date and time.' },
  mixed_chat_formats: { status: 400, message: 'chat_text mixes export formats (two exports pasted together?); import them one by one.' },
  ambiguous_date_order: { status: 400, message: 'The dates read as well day-first as month-first; give the device_language_code with its country (e.g. en-GB).' },
  too_many_chat_participants: { status: 400, message: 'A chat import holds one customer and the business: at most two participants.' },
  chat_customer_unknown: { status: 400, message: 'The customer cannot be told from the export: give chat_participants with their number.' },
  invalid_base64: { status: 400, message: 'A media file is not valid base64.' },
  payload_too_large: { status: 413, message: 'The request body is too large.' },
  uri_too_long: { status: 414, message: 'A path segment is too long.' },
  unsupported_media_type: { status: 415, message: 'The content type is not supported.' },
  range_not_satisfiable: { status: 416, message: 'The requested range is outside the file.' },
  idempotency_key_reused: { status: 422, message: 'This Idempotency-Key was already used for a different request; use a new key.' },
  too_many_attempts: { status: 429, message: 'Too many attempts. Try again later.' },
  window_closed: { status: 453, message: 'The customer care window is closed: only templates can be sent until the customer writes again.' },
  internal_error: { status: 500, message: 'The server failed to handle the request.' },
  /**
   * The one code for an unavailable dependency (a service, NATS, the database, the network);
   * `details.dependency` names it. Retry later.
   */
  service_unavailable: { status: 503, message: 'A service this request needs is unavailable; retry later.' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof errorCatalogue;

export function isErrorCode(code: string): code is ErrorCode {
  return Object.hasOwn(errorCatalogue, code);
}

export interface ServiceErrorOptions {
  /** Per-field messages of a validation error (DRF style). */
  fields?: Record<string, string[]>;
  /** Extra members of the error body, e.g. the window expiry of a 453. */
  details?: Record<string, unknown>;
  /** HTTP headers of the answer, e.g. Retry-After. */
  headers?: Record<string, string>;
  cause?: unknown;
}

/**
 * The one error of the system: thrown by domain code and use cases in every service with a
 * code from the catalogue, carried across request/reply in the `Nats-Service-Error*` headers
 * (and re-thrown by `bus.request` with the transport error as `cause`), and turned into the
 * API's body by one mapper per API. Domain code never throws HTTP errors.
 */
export class ServiceError extends Error {
  override readonly name = 'ServiceError';
  readonly code: ErrorCode;
  readonly status: number;
  readonly fields: Record<string, string[]> | undefined;
  readonly details: Record<string, unknown> | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(code: ErrorCode, message?: string, opts: ServiceErrorOptions = {}) {
    super(
      message ?? errorCatalogue[code].message,
      opts.cause === undefined ? undefined : { cause: opts.cause },
    );
    this.code = code;
    this.status = errorCatalogue[code].status;
    this.fields = opts.fields;
    this.details = opts.details;
    this.headers = opts.headers;
  }

  static validation(fields: Record<string, string[]>, message?: string): ServiceError {
    return new ServiceError('validation_error', message, { fields });
  }

  /** A dependency is down: 503 `service_unavailable` naming it. */
  static unavailable(dependency: string, message?: string, opts: ServiceErrorOptions = {}): ServiceError {
    return new ServiceError('service_unavailable', message, {
      ...opts,
      details: { ...opts.details, dependency },
    });
  }
}
