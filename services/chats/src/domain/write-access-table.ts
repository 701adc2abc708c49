import { canWriteChat, type Principal } from '@switchboard/proto';

/**
 * How a chat's assignee stands to the caller: nobody, the caller (or one of the caller's
 * groups), or someone else.
 */
export type AssigneeClass = 0 | 1 | 2;

/**
 * Whether `p` may write to the chat of `waId`, for each of the nine ways the chat's user and
 * group assignment can stand to the caller, as a bit mask: bit `3 * user + group`, each class
 * as in `AssigneeClass`.
 *
 * The send path stores a message in the same statement that reads its chat, so the permission
 * must be decided inside that statement. The rule itself stays `canWriteChat`: it is evaluated
 * here once per class on a sample chat of that class, and the statement only picks the bit of
 * the class it finds. This holds because the rule sees a chat only through its wa_id (known
 * before the statement) and whether its assignees are absent, the caller's, or others'.
 */
export function writeAccessMask(p: Principal, waId: string): number {
  const someoneElse = Math.max(0, p.user_id, ...p.group_ids) + 1;
  const users = [null, p.user_id, someoneElse] as const;
  // A caller in no group cannot be in the chat's group: that class then never occurs.
  const groups = [null, p.group_ids[0] ?? null, someoneElse] as const;
  let mask = 0;
  users.forEach((user, u) => {
    groups.forEach((group, g) => {
      if (g === 1 && group === null) return;
      if (canWriteChat(p, { wa_id: waId, assigned_to_user: user, assigned_group: group }))
        mask |= 1 << (3 * u + g);
    });
  });
  return mask;
}

/** The bit of `writeAccessMask` a chat with these assignees selects. */
export function assigneeBit(
  chat: { assigned_to_user: number | null; assigned_group: number | null },
  p: Pick<Principal, 'user_id' | 'group_ids'>,
): number {
  const user: AssigneeClass =
    chat.assigned_to_user === null ? 0 : chat.assigned_to_user === p.user_id ? 1 : 2;
  const group: AssigneeClass =
    chat.assigned_group === null ? 0 : p.group_ids.includes(chat.assigned_group) ? 1 : 2;
  return 3 * user + group;
}
