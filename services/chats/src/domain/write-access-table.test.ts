import { canWriteChat, type Principal } from '@switchboard/proto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createGroupCommit } from './group-commit.ts';
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

describe('createGroupCommit', () => {
  it('runs what arrives meanwhile together, in order, and a failing batch item by item', async () => {
    const batches: number[][] = [];
    const commit = createGroupCommit<number, number>(async (items) => {
      batches.push([...items]);
      if (items.includes(13)) throw new Error('poison');
      return items.map((i) => i * 2);
    });
    const outcomes = await Promise.allSettled([1, 2, 13, 4].map((i) => commit.submit(i)));
    expect(outcomes.map((o) => (o.status === 'fulfilled' ? o.value : 'failed'))).toEqual([2, 4, 'failed', 8]);
    // The first alone (the committer was idle), then the rest together, then one by one.
    expect(batches).toEqual([[1], [2, 13, 4], [2], [13], [4]]);
  });

  it('runs a batch that lost a deadlock item by item, as any failure that is not a lost connection', async () => {
    const batches: number[][] = [];
    const deadlock = Object.assign(new Error('deadlock detected'), {
      name: 'error',
      code: '40P01',
      severity: 'ERROR',
    });
    const commit = createGroupCommit<number, number>(async (items) => {
      batches.push([...items]);
      if (items.length > 1) throw deadlock;
      return items;
    });
    const outcomes = await Promise.allSettled([1, 2, 3].map((i) => commit.submit(i)));
    expect(outcomes.map((o) => (o.status === 'fulfilled' ? o.value : 'failed'))).toEqual([1, 2, 3]);
    expect(batches).toEqual([[1], [2, 3], [2], [3]]);
  });

  it('fails a whole batch at once when the database is unreachable, without running it item by item', async () => {
    const batches: number[][] = [];
    const down = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    const commit = createGroupCommit<number, number>(async (items) => {
      batches.push([...items]);
      if (items.length > 1) throw down;
      return items;
    });
    const outcomes = await Promise.allSettled([1, 2, 3, 4].map((i) => commit.submit(i)));
    expect(outcomes.map((o) => (o.status === 'fulfilled' ? o.value : o.reason))).toEqual([
      1,
      down,
      down,
      down,
    ]);
    expect(batches).toEqual([[1], [2, 3, 4]]);
  });
});
