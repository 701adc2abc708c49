import type { z } from 'zod';

export type BusDirection = 'publish' | 'consume' | 'request' | 'reply';

/** A payload that does not match its contract, on either side of the bus. */
export class BusValidationError extends Error {
  override readonly name = 'BusValidationError';
  readonly code = 'bus_validation_failed';
  readonly contract: string;
  readonly direction: BusDirection;
  readonly issues: readonly z.core.$ZodIssue[];

  constructor(contract: string, direction: BusDirection, issues: readonly z.core.$ZodIssue[]) {
    super(
      `${direction} of ${contract} failed validation: ${issues
        .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
        .join('; ')}`,
    );
    this.contract = contract;
    this.direction = direction;
    this.issues = issues;
  }
}

/**
 * The typed error envelope of request/reply: a service answers with the
 * `Nats-Service-Error` / `Nats-Service-Error-Code` headers, the caller gets this error.
 */
export class BusRequestError extends Error {
  override readonly name = 'BusRequestError';
  readonly contract: string;
  readonly code: string;
  readonly status: number;
  readonly details: Record<string, unknown> | undefined;

  constructor(
    contract: string,
    code: string,
    status: number,
    message: string,
    details?: Record<string, unknown>,
  ) {
    super(message);
    this.contract = contract;
    this.code = code;
    this.status = status;
    this.details = details;
  }
}

/**
 * Thrown by an RPC handler to answer with a stable error code instead of a generic failure.
 * `status` follows HTTP semantics so the gateway can map it without a lookup table.
 */
export class RpcError extends Error {
  override readonly name = 'RpcError';
  readonly code: string;
  readonly status: number;
  /** Extra fields for the caller's error body (e.g. the window expiry of a 453). */
  readonly details: Record<string, unknown> | undefined;

  constructor(code: string, status: number, message: string, details?: Record<string, unknown>) {
    super(message);
    this.code = code;
    this.status = status;
    this.details = details;
  }
}
