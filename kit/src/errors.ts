import { z } from 'zod';

/**
 * The one application error. Domain code throws it with a stable snake_case code; each API's
 * error handler turns it into that API's body shape. Domain code never throws HTTP errors.
 */
export class AppError extends Error {
  override readonly name = 'AppError';
  readonly code: string;
  readonly status: number;
  readonly fields: Record<string, string[]> | undefined;
  readonly headers: Record<string, string> | undefined;
  readonly extra: Record<string, unknown> | undefined;

  constructor(
    status: number,
    code: string,
    reason: string,
    opts: {
      fields?: Record<string, string[]>;
      headers?: Record<string, string>;
      extra?: Record<string, unknown>;
    } = {},
  ) {
    super(reason);
    this.status = status;
    this.code = code;
    this.fields = opts.fields;
    this.headers = opts.headers;
    this.extra = opts.extra;
  }
}

export const errors = {
  validation: (fields: Record<string, string[]>, reason = 'The request is not valid.') =>
    new AppError(400, 'validation_error', reason, { fields }),
  unauthorized: (reason = 'Authentication credentials were not provided or are not valid.') =>
    new AppError(401, 'not_authenticated', reason),
  forbidden: (code = 'permission_denied', reason = 'You do not have permission to perform this action.') =>
    new AppError(403, code, reason),
  notFound: (reason = 'Not found.') => new AppError(404, 'not_found', reason),
};

/** The inbox (DRF-style) error body, for route response schemas (extra keys pass through). */
export const InboxErrorSchema = z
  .looseObject({
    code: z.string(),
    reason: z.string(),
    fields: z.record(z.string(), z.array(z.string())).optional(),
  })
  .meta({ id: 'Error' });

/** The inbox (DRF-style) error body. */
export interface InboxErrorBody {
  code: string;
  reason: string;
  fields?: Record<string, string[]>;
  [extra: string]: unknown;
}
