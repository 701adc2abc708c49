import { canWriteChat, type Principal } from '@switchboard/proto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { assigneeBit, writeAccessMask } from './write-access-table.ts';

const access = fc.constantFrom('all' as const, 'assigned' as const, 'none' as const);
const id = fc.integer({ min: 1, max: 6 });
const waId = fc.constantFrom('491700000001', '491700000002');
const principal: fc.Arbitrary<Principal> = fc.record({
  user_id: id,
  username: fc.constant('agent'),
  role: fc.constantFrom('admin' as const, 'user' as const, 'configurator' as const),
  group_ids: fc.uniqueArray(id, { maxLength: 3 }),
  permissions: fc.record({ can_use_tags: fc.boolean(), can_read_chats: access, can_write_to_chats: access }),
  assigned_wa_ids: fc.uniqueArray(waId, { maxLength: 2 }),
});
const chat = fc.record({
  wa_id: waId,
  assigned_to_user: fc.option(id, { nil: null }),
  assigned_group: fc.option(id, { nil: null }),
});

describe('writeAccessMask', () => {
  it('picks, for every chat, the bit canWriteChat answers', () => {
    fc.assert(
      fc.property(principal, chat, (p, c) => {
        const allowed = ((writeAccessMask(p, c.wa_id) >> assigneeBit(c, p)) & 1) === 1;
        expect(allowed).toBe(canWriteChat(p, c));
      }),
      { numRuns: 5_000 },
    );
  });

  it('allows nothing to the configurator and everything to a writer of all chats', () => {
    const base: Principal = {
      user_id: 3,
      username: 'a',
      role: 'user',
      group_ids: [],
      permissions: { can_use_tags: false, can_read_chats: 'all', can_write_to_chats: 'all' },
      assigned_wa_ids: [],
    };
    expect(writeAccessMask({ ...base, role: 'configurator' }, '491700000001')).toBe(0);
    // Without groups the "caller's group" classes never occur and stay 0.
    expect(writeAccessMask(base, '491700000001')).toBe(0b101_101_101);
  });
});
