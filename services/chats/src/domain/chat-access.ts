import { assertMayWriteChat, type Principal } from '@switchboard/proto';

/** A chat that does not exist yet counts as unassigned. */
export function assertMayWrite(
  p: Principal,
  waId: string,
  chat: { wa_id: string; assigned_to_user: number | null; assigned_group: number | null } | undefined,
): void {
  assertMayWriteChat(p, chat ?? { wa_id: waId, assigned_to_user: null, assigned_group: null });
}
