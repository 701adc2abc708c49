import type { Principal, Role } from '@switchboard/proto';
import { ServiceError } from '@switchboard/proto';
import type { UserUpdate } from './schemas.ts';

/** The parts of a user that grant rights: nobody changes their own, only admins change roles. */
export function rightsTouched(input: UserUpdate): string[] {
  const touched: string[] = [];
  if (input.profile?.role !== undefined) touched.push('profile.role');
  if (input.permissions !== undefined) touched.push('permissions');
  if (input.groups !== undefined) touched.push('groups');
  if (input.assigned_wa_ids !== undefined) touched.push('assigned_wa_ids');
  if (input.is_active !== undefined) touched.push('is_active');
  return touched;
}

/** Throws when `actor` may not apply `input` to `target` (their own rights, or a role change by a non-admin). */
export function assertMayChangeRights(
  actor: Pick<Principal, 'user_id' | 'role'>,
  target: { id: number; role: Role },
  input: UserUpdate,
): void {
  const touched = rightsTouched(input);
  if (touched.length && actor.user_id === target.id) {
    throw new ServiceError(
      'cannot_change_own_rights',
      `You cannot change your own ${touched.join(', ')}; ask another admin.`,
    );
  }
  if (input.profile?.role !== undefined && input.profile.role !== target.role && actor.role !== 'admin') {
    throw new ServiceError('role_change_not_allowed', 'Only admins change the role of a user.');
  }
}
