export interface Assignment {
  assigned_to_user: number | null;
  assigned_group: number | null;
}

/**
 * The outcome of an assign request on a chat: fields left out keep their value, `null` clears
 * them. Handing a resolved chat to someone means there is work again, so it reopens.
 */
export function assignmentChange(
  chat: Assignment & { resolved: boolean },
  r: { assigned_to_user?: number | null | undefined; assigned_group?: number | null | undefined },
): { next: Assignment; changed: boolean; unassigned: boolean; reopen: boolean } {
  const next = {
    assigned_to_user: r.assigned_to_user === undefined ? chat.assigned_to_user : r.assigned_to_user,
    assigned_group: r.assigned_group === undefined ? chat.assigned_group : r.assigned_group,
  };
  const changed =
    next.assigned_to_user !== chat.assigned_to_user || next.assigned_group !== chat.assigned_group;
  const reopen = chat.resolved && (next.assigned_to_user !== null || next.assigned_group !== null) && changed;
  const unassigned = next.assigned_to_user === null && next.assigned_group === null;
  return { next, changed, unassigned, reopen };
}
