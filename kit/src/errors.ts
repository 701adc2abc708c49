import { z } from 'zod';

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
