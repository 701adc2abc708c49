import { ServiceError } from '@switchboard/proto';
import { describe, expect, it } from 'vitest';
import { assertMayChangeRights, rightsTouched } from './rights.ts';

const admin = { user_id: 1, role: 'admin' as const };
const configurator = { user_id: 2, role: 'configurator' as const };
const agent = { id: 3, role: 'user' as const };

function codeOf(fn: () => void): string | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    if (err instanceof ServiceError) return err.code;
    throw err;
  }
}

describe('rightsTouched', () => {
  it('lists the rights-granting fields of an update', () => {
    expect(
      rightsTouched({
        profile: { role: 'admin' },
        permissions: { can_use_tags: false },
        groups: [],
        assigned_wa_ids: [],
        is_active: true,
      }),
    ).toEqual(['profile.role', 'permissions', 'groups', 'assigned_wa_ids', 'is_active']);
  });

  it('ignores names, e-mail, password and availability', () => {
    expect(
      rightsTouched({ first_name: 'A', email: 'a@b.c', password: 'x', profile: { is_available: false } }),
    ).toEqual([]);
  });
});

describe('assertMayChangeRights', () => {
  it('lets an admin change another user’s rights and role', () => {
    expect(
      codeOf(() => assertMayChangeRights(admin, agent, { profile: { role: 'admin' }, groups: [1] })),
    ).toBe(undefined);
  });

  it('refuses a change of one’s own rights', () => {
    expect(codeOf(() => assertMayChangeRights(admin, { id: 1, role: 'admin' }, { is_active: false }))).toBe(
      'cannot_change_own_rights',
    );
  });

  it('names the fields in the message', () => {
    expect(() =>
      assertMayChangeRights(admin, { id: 1, role: 'admin' }, { permissions: {}, groups: [] }),
    ).toThrow('You cannot change your own permissions, groups; ask another admin.');
  });

  it('lets anyone change their own name and availability', () => {
    expect(
      codeOf(() =>
        assertMayChangeRights(
          admin,
          { id: 1, role: 'admin' },
          { first_name: 'Me', profile: { is_available: false } },
        ),
      ),
    ).toBe(undefined);
  });

  it('lets only an admin change a role', () => {
    expect(codeOf(() => assertMayChangeRights(configurator, agent, { profile: { role: 'admin' } }))).toBe(
      'role_change_not_allowed',
    );
  });

  it('lets a non-admin send the unchanged role', () => {
    expect(codeOf(() => assertMayChangeRights(configurator, agent, { profile: { role: 'user' } }))).toBe(
      undefined,
    );
  });
});
