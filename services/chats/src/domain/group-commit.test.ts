import { describe, expect, it } from 'vitest';
import { createGroupCommit } from './group-commit.ts';

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
