import { NETWORK_ERROR_CATALOGUE, NetworkErrorCode, type NetworkErrorItem } from './wire.ts';

export interface FailureOptions {
  /** HTTP status when it is not the one the code implies (injected faults). */
  status?: number;
  retryAfterSeconds?: number;
  /** Fields answered next to `error` (block_users lists its per-user results there). */
  extra?: Record<string, unknown>;
}

/**
 * A refusal by the network, named by its Cloud API code. Domain code throws it; the error
 * handler turns it into the Graph-API error body and the HTTP status the code implies.
 */
export class NetworkFailure extends Error {
  override readonly name = 'NetworkFailure';
  readonly code: number;
  readonly details: string;
  readonly status: number | undefined;
  readonly retryAfterSeconds: number | undefined;
  readonly extra: Record<string, unknown> | undefined;

  constructor(code: number, details?: string, opts: FailureOptions = {}) {
    const entry = NETWORK_ERROR_CATALOGUE[code];
    super(`(#${code}) ${entry?.title ?? 'Error'}`);
    this.code = code;
    this.details = details ?? entry?.details ?? 'The request failed.';
    this.status = opts.status;
    this.retryAfterSeconds = opts.retryAfterSeconds;
    this.extra = opts.extra;
  }
}

/** HTTP status the network answers with for a code. */
export function httpStatusFor(failure: NetworkFailure): number {
  if (failure.status !== undefined) return failure.status;
  switch (failure.code) {
    case NetworkErrorCode.authException:
      return 401;
    case NetworkErrorCode.rateLimitHit:
      return 429;
    case NetworkErrorCode.somethingWentWrong:
    case NetworkErrorCode.apiUnknown:
      return 500;
    case NetworkErrorCode.apiService:
      return 503;
    default:
      return 400;
  }
}

/** The error entry of a failed status or a failed block, as statuses[].errors carries it. */
export function errorItem(code: number, details?: string): NetworkErrorItem {
  const entry = NETWORK_ERROR_CATALOGUE[code];
  const title = entry?.title ?? 'Error';
  return {
    code,
    title,
    message: title,
    error_data: { details: details ?? entry?.details ?? title },
    href: 'https://developers.facebook.com/docs/whatsapp/cloud-api/support/error-codes/',
  };
}

export const failures = {
  unauthorized: () =>
    new NetworkFailure(
      NetworkErrorCode.authException,
      'The D360-API-KEY header is missing or does not belong to any business number.',
    ),
  invalidParameter: (details: string) => new NetworkFailure(NetworkErrorCode.invalidParameter, details),
  missingParameter: (details: string) =>
    new NetworkFailure(NetworkErrorCode.requiredParameterMissing, details),
  invalidValue: (details: string) => new NetworkFailure(NetworkErrorCode.parameterValueNotValid, details),
  notFound: (what: string) =>
    new NetworkFailure(
      NetworkErrorCode.invalidParameter,
      `Unsupported request - object with ID '${what}' does not exist, cannot be loaded due to missing permissions, or does not support this operation.`,
    ),
};
