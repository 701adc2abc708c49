import { ChatAccessSchema, RoleSchema, WaIdSchema } from '@switchboard/proto';
import { z } from 'zod';

/** The largest PostgreSQL `integer`: every row id of the inbox is one. */
export const PG_INTEGER_MAX = 2_147_483_647;

/**
 * A row id in a JSON body: 1..2^31−1. Larger ones would overflow PostgreSQL's `integer` (a 500);
 * validating them here makes them a 400 on the field, like any other bad value.
 */
export const Id = z.number().int().min(1).max(PG_INTEGER_MAX);
/** A row id in a path or query string (text, coerced), with the bounds of `Id`. */
export const IdText = z.coerce.number().int().min(1).max(PG_INTEGER_MAX);

export const GroupOut = z.object({ id: z.number().int(), name: z.string() }).meta({ id: 'Group' });

export const PermissionsOut = z.object({
  can_use_tags: z.boolean(),
  can_read_chats: ChatAccessSchema,
  can_write_to_chats: ChatAccessSchema,
});

export const UserOut = z
  .object({
    id: z.number().int(),
    username: z.string(),
    first_name: z.string(),
    last_name: z.string(),
    email: z.string(),
    profile: z.object({ role: RoleSchema, is_available: z.boolean() }),
    groups: z.array(GroupOut),
    permissions: PermissionsOut,
    assigned_wa_ids: z.array(WaIdSchema),
    is_active: z.boolean(),
  })
  .meta({
    id: 'User',
    description:
      'Roles: `admin` (manages the instance), `user` (agent), `configurator` (service account created with the ' +
      'instance: admin rights except messaging, no seat). Chat permissions: `all`, `assigned` (chats assigned to ' +
      'the user, to one of their groups, or listed in `assigned_wa_ids`) or `none`.',
  });
export type UserOut = z.infer<typeof UserOut>;

const Username = z
  .string()
  .trim()
  .min(1)
  .max(150)
  .regex(/^[\w.@+-]+$/, 'Letters, digits and @/./+/-/_ only.');

export const UserCreate = z.object({
  username: Username,
  password: z.string().optional().describe('Optional: a user without a password signs in password-less.'),
  // 254: the longest address SMTP carries; also keeps the value within a btree index row.
  email: z.union([z.email().max(254), z.literal('')]).optional(),
  first_name: z.string().max(150).optional(),
  last_name: z.string().max(150).optional(),
  profile: z
    .object({
      role: z
        .enum(['admin', 'user'])
        .optional()
        .describe('`configurator` is created with the instance only.'),
      is_available: z.boolean().optional(),
    })
    .optional(),
  groups: z.array(Id).max(1000).optional().describe('Group ids.'),
  permissions: PermissionsOut.partial().optional(),
  assigned_wa_ids: z.array(WaIdSchema).optional(),
});
export type UserCreate = z.infer<typeof UserCreate>;

export const UserUpdate = UserCreate.partial().extend({
  is_active: z.boolean().optional().describe('`true` re-activates a deleted user (takes a seat again).'),
});
export type UserUpdate = z.infer<typeof UserUpdate>;

export const GroupIn = z.object({ name: z.string().trim().min(1).max(150) });

export const IdParam = z.object({ id: IdText });
