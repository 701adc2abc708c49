import { z } from 'zod';

/** Every Cloud API body names its product; the network rejects anything else. */
export const MessagingProductSchema = z.literal('whatsapp');

/**
 * A customer's WhatsApp id: digits only (5 to 20), country code first, no plus sign. The one
 * wa_id rule of the inbox: every schema that takes or returns a wa_id uses this one.
 */
export const WaIdSchema = z
  .string()
  .regex(/^\d{5,20}$/, 'digits only, with the country code, no plus sign')
  .describe('The customer’s number in international format: 5 to 20 digits, no plus sign.');

/**
 * A recipient as the network accepts it in `to` and `block_users[].user`: a phone number in
 * international format, with or without `+`, spaces, dashes or parentheses.
 */
export const RecipientSchema = z
  .string()
  .min(5)
  .max(32)
  .regex(/^\+?[\d\s().-]+$/, 'a phone number in international format');

/** The network writes every timestamp as a string of POSIX seconds. */
export const PosixSecondsStringSchema = z.string().regex(/^\d{1,12}$/, 'POSIX seconds as a string');

/** The wa_id the network derives from a recipient as the business wrote it. */
export function normalizeRecipient(input: string): string {
  return input.replace(/\D/g, '');
}

/** One error entry as it appears in statuses, inbound messages and block_users results. */
export const NetworkErrorItemSchema = z.looseObject({
  code: z.number().int(),
  title: z.string().optional(),
  message: z.string().optional(),
  details: z.string().optional(),
  error_data: z.looseObject({ details: z.string() }).optional(),
  href: z.string().optional(),
});
export type NetworkErrorItem = z.infer<typeof NetworkErrorItemSchema>;
