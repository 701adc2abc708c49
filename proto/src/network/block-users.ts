import { z } from 'zod';
import { MessagingProductSchema, NetworkErrorItemSchema, RecipientSchema } from './common.ts';
import { CloudApiErrorSchema } from './errors.ts';

/** `POST /block_users` and `DELETE /block_users` request. */
export const BlockUsersRequestSchema = z.strictObject({
  messaging_product: MessagingProductSchema,
  block_users: z
    .array(z.strictObject({ user: RecipientSchema }))
    .min(1)
    .max(1000),
});
export type BlockUsersRequest = z.infer<typeof BlockUsersRequestSchema>;

export const BlockedUserSchema = z.looseObject({
  input: z.string(),
  /** Absent in `failed_users` when the input is not a valid number. */
  wa_id: z.string().optional(),
  errors: z.array(NetworkErrorItemSchema).optional(),
});
export type BlockedUser = z.infer<typeof BlockedUserSchema>;

/**
 * Block and unblock answers. A partial failure comes back as HTTP 400 with this same body plus
 * an `error` (code 139100), so the per-user lists are always readable.
 */
export const BlockUsersResponseSchema = z.looseObject({
  messaging_product: MessagingProductSchema,
  block_users: z.looseObject({
    added_users: z.array(BlockedUserSchema).optional(),
    removed_users: z.array(BlockedUserSchema).optional(),
    failed_users: z.array(BlockedUserSchema).optional(),
  }),
  error: CloudApiErrorSchema.optional(),
});
export type BlockUsersResponse = z.infer<typeof BlockUsersResponseSchema>;
