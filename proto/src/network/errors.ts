import { z } from 'zod';

/** The Graph-API error body every Cloud API endpoint answers with on failure. */
export const CloudApiErrorSchema = z.looseObject({
  message: z.string(),
  type: z.string(),
  code: z.number().int(),
  error_subcode: z.number().int().optional(),
  error_data: z
    .looseObject({
      messaging_product: z.literal('whatsapp').optional(),
      details: z.string(),
    })
    .optional(),
  fbtrace_id: z.string().optional(),
});
export type CloudApiError = z.infer<typeof CloudApiErrorSchema>;

export const CloudApiErrorBodySchema = z.looseObject({ error: CloudApiErrorSchema });
export type CloudApiErrorBody = z.infer<typeof CloudApiErrorBodySchema>;

/**
 * Cloud API error codes the inbox reacts to. Titles follow Meta's error-code reference; the
 * network puts them in `message` as `(#<code>) <title>`.
 */
export const NetworkErrorCode = {
  authException: 0,
  apiUnknown: 1,
  apiService: 2,
  invalidParameter: 100,
  rateLimitHit: 130429,
  recipientBlockedByBusiness: 130403,
  somethingWentWrong: 131000,
  messageUndeliverable: 131026,
  reEngagementMessage: 131047,
  requiredParameterMissing: 131008,
  parameterValueNotValid: 131009,
  unsupportedMessageType: 131051,
  mediaUploadError: 131053,
  templateParamCountMismatch: 132000,
  templateDoesNotExist: 132001,
  blockUsersFailed: 139100,
} as const;
export type NetworkErrorCodeValue = (typeof NetworkErrorCode)[keyof typeof NetworkErrorCode];

/** Title and default details of each code the sandbox emits and the inbox interprets. */
// biome-ignore format: a table reads best one code a line
export const NETWORK_ERROR_CATALOGUE: Readonly<Record<number, { title: string; details: string }>> = {
  0: { title: 'AuthException', details: 'We were unable to authenticate the app user.' },
  1: { title: 'API Unknown', details: 'Invalid request or possible server error.' },
  2: { title: 'API Service', details: 'Temporary due to downtime or due to being overloaded.' },
  100: { title: 'Invalid parameter', details: 'The request included one or more unsupported or misspelled parameters.' },
  130403: { title: 'Recipient blocked', details: 'Unable to deliver the message. This business has blocked the end user on WhatsApp' },
  130429: { title: 'Rate limit hit', details: 'Cloud API message throughput has been reached.' },
  131000: { title: 'Something went wrong', details: 'Message failed to send due to an unknown error.' },
  131008: { title: 'Required parameter is missing', details: 'The request is missing a required parameter.' },
  131009: { title: 'Parameter value is not valid', details: 'One or more parameter values are invalid.' },
  131026: { title: 'Message undeliverable', details: 'Unable to deliver message.' },
  131047: { title: 'Re-engagement message', details: 'Message failed to send because more than 24 hours have passed since the customer last replied to this number.' },
  131051: { title: 'Message type unknown', details: 'Message type is currently not supported.' },
  131053: { title: 'Media upload error', details: 'Unable to upload the media used in the message.' },
  132000: { title: 'Number of parameters does not match the expected number of params', details: 'The number of variable parameter values does not match the number of variables in the template.' },
  132001: { title: 'Template name does not exist in the translation', details: 'The template does not exist in the specified language or has not been approved.' },
  139100: { title: 'Failed to block/unblock users', details: 'Failed to block some users, see the block_users response list for details' },
};

export type NetworkErrorKind =
  /** The network answered with an error status (its body, when parseable, is in `body`). */
  | 'api'
  /** No HTTP answer: refused, reset, DNS, TLS. */
  | 'connection'
  /** Headers or body did not arrive in time. */
  | 'timeout'
  /** The request broke the Cloud API schema; it was never sent. */
  | 'invalid_request'
  /** The network answered 2xx with a body that does not match the Cloud API schema. */
  | 'invalid_response';

export interface NetworkErrorInit {
  kind: NetworkErrorKind;
  operation: string;
  message: string;
  status?: number;
  code?: number;
  subcode?: number;
  type?: string;
  details?: string;
  fbtraceId?: string;
  retryAfterMs?: number;
  attempt?: number;
  body?: unknown;
  cause?: unknown;
}

/**
 * Every failure of the network client. `code` carries the Cloud API code (131047, 131026,
 * 130429...) when the network gave one, so callers branch on codes, never on messages.
 */
export class NetworkError extends Error {
  override readonly name = 'NetworkError';
  readonly kind: NetworkErrorKind;
  readonly operation: string;
  readonly status: number | undefined;
  readonly code: number | undefined;
  readonly subcode: number | undefined;
  readonly type: string | undefined;
  readonly details: string | undefined;
  readonly fbtraceId: string | undefined;
  /** From `Retry-After`, when the network sent one. */
  readonly retryAfterMs: number | undefined;
  /** Which attempt produced this error (1 for the first). */
  readonly attempt: number;
  readonly body: unknown;

  constructor(init: NetworkErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.kind = init.kind;
    this.operation = init.operation;
    this.status = init.status;
    this.code = init.code;
    this.subcode = init.subcode;
    this.type = init.type;
    this.details = init.details;
    this.fbtraceId = init.fbtraceId;
    this.retryAfterMs = init.retryAfterMs;
    this.attempt = init.attempt ?? 1;
    this.body = init.body;
  }

  /** Throttling, server failures and lost connections may pass; any other answer will not. */
  get retryable(): boolean {
    if (this.kind === 'connection' || this.kind === 'timeout') return true;
    if (this.kind !== 'api' || this.status === undefined) return false;
    return this.status === 429 || this.status >= 500;
  }
}

export function isNetworkError(err: unknown, code?: number): err is NetworkError {
  return err instanceof NetworkError && (code === undefined || err.code === code);
}
