import { CloudApiErrorBodySchema } from '../domain/wire.ts';

/** Error answers every Cloud API route documents. */
export const networkErrorResponses = {
  400: CloudApiErrorBodySchema,
  401: CloudApiErrorBodySchema,
  429: CloudApiErrorBodySchema,
  500: CloudApiErrorBodySchema,
  503: CloudApiErrorBodySchema,
} as const;

export const networkSecurity = [{ d360ApiKey: [] }];
