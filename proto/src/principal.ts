import { z } from 'zod';
import { ServiceError } from './errors.ts';
import { WaIdSchema } from './network/common.ts';

/**
 * Roles: `admin` manages the instance; `user` is an agent; `configurator` is the service
 * account created with an instance (admin rights, no messaging, no seat).
 */
export const RoleSchema = z.enum(['admin', 'user', 'configurator']);
export type Role = z.infer<typeof RoleSchema>;

/** `all` chats, only `assigned` ones (to the user, one of their groups, or in assigned_wa_ids), or `none`. */
export const ChatAccessSchema = z.enum(['all', 'assigned', 'none']);
export type ChatAccess = z.infer<typeof ChatAccessSchema>;

export const PermissionsSchema = z.object({
  can_use_tags: z.boolean(),
  can_read_chats: ChatAccessSchema,
  can_write_to_chats: ChatAccessSchema,
});
export type Permissions = z.infer<typeof PermissionsSchema>;

/**
 * Who is calling, resolved once per request by the gateway and carried with every command
 * and request on the bus, so services authorise without reading identity tables.
 */
export const PrincipalSchema = z.object({
  user_id: z.number().int().positive(),
  username: z.string(),
  role: RoleSchema,
  group_ids: z.array(z.number().int().positive()),
  permissions: PermissionsSchema,
  assigned_wa_ids: z.array(WaIdSchema),
});
export type Principal = z.infer<typeof PrincipalSchema>;

/** What the chat-permission rules need to know about a chat. */
export const ChatAccessSubjectSchema = z.object({
  wa_id: WaIdSchema,
  assigned_to_user: z.number().int().positive().nullable(),
  assigned_group: z.number().int().positive().nullable(),
});
export type ChatAccessSubject = z.infer<typeof ChatAccessSubjectSchema>;

function chatAccess(access: ChatAccess, p: Principal, chat: ChatAccessSubject): boolean {
  if (p.role === 'configurator') return false;
  if (access === 'all') return true;
  if (access === 'none') return false;
  return (
    chat.assigned_to_user === p.user_id ||
    (chat.assigned_group !== null && p.group_ids.includes(chat.assigned_group)) ||
    p.assigned_wa_ids.includes(chat.wa_id)
  );
}

export function canReadChat(p: Principal, chat: ChatAccessSubject): boolean {
  return chatAccess(p.permissions.can_read_chats, p, chat);
}

/** Writing implies being able to see the chat. */
export function canWriteChat(p: Principal, chat: ChatAccessSubject): boolean {
  return canReadChat(p, chat) && chatAccess(p.permissions.can_write_to_chats, p, chat);
}

/**
 * What a per-user webhook may receive: admins and the configurator every chat (they manage
 * the instance's integrations); anyone else the chats they may read.
 */
export function canReceiveChat(p: Principal, chat: ChatAccessSubject): boolean {
  if (p.role === 'admin' || p.role === 'configurator') return true;
  return canReadChat(p, chat);
}

/**
 * The gate of every messaging path (reading and writing chats and messages): the configurator
 * never messages, and a user without any read access is refused outright rather than shown
 * empty lists. Chat-level rules (`canReadChat`, `canWriteChat`) apply after it.
 */
export function assertMayMessage(p: Principal): void {
  if (p.role === 'configurator') throw new ServiceError('configurator_not_allowed');
  if (p.permissions.can_read_chats === 'none')
    throw new ServiceError('permission_denied', 'You may not read chats.');
}

/**
 * Writing to one chat: a chat the caller may not read does not exist for them (404, like a
 * missing one); one they may read but not write is refused (403).
 */
export function assertMayWriteChat(p: Principal, chat: ChatAccessSubject): void {
  assertMayMessage(p);
  if (canWriteChat(p, chat)) return;
  if (!canReadChat(p, chat)) throw new ServiceError('not_found', 'No chat with this wa_id.');
  throw new ServiceError('permission_denied', 'You may not write to this chat.');
}
