import { describe, expect, it } from 'vitest';
import { createGroupCommit } from './group-commit.ts';

/** A run that holds its first batch until `release()`, so that later items arrive while it runs. */
function holdingFirst<O>(run: (items: readonly number[]) => Promise<readonly O[]>) {
  let release = () => {};
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  let first = true;
  return {
    release: () => release(),
    run: async (items: readonly number[]) => {
      if (first) {
        first = false;
        await gate;
      }
      return run(items);
    },
  };
}

/**
 * Submits `first` to an idle committer, waits until its batch is running (held), submits `rest`
 * meanwhile, then lets the batch finish.
 */
async function firstThenRest<O>(
  submit: (i: number) => Promise<O>,
  held: { release(): void },
  first: number,
  rest: number[],
) {
  const alone = submit(first);
  // The committer's own setImmediate ran first: its batch of `first` is waiting at the gate.
  await new Promise((resolve) => setImmediate(resolve));
  const others = rest.map(submit);
  held.release();
  return Promise.allSettled([alone, ...others]);
}

describe('createGroupCommit', () => {
  it('runs what is submitted in one turn of the event loop as one batch, in order', async () => {
    const batches: number[][] = [];
    const commit = createGroupCommit<number, number>(async (items) => {
      batches.push([...items]);
      return items.map((i) => i * 2);
    });
    expect(await Promise.all([1, 2, 3].map((i) => commit.submit(i)))).toEqual([2, 4, 6]);
    expect(batches).toEqual([[1, 2, 3]]);
  });

  it('closes a batch at its size limit, and takes an item larger than the limit alone', async () => {
    const batches: number[][] = [];
    const commit = createGroupCommit<number, number>(
      async (items) => {
        batches.push([...items]);
        return items;
      },
      { sizeOf: (i) => i, maxSize: 10 },
    );
    expect(await Promise.all([4, 5, 2, 30, 1, 9].map((i) => commit.submit(i)))).toEqual([4, 5, 2, 30, 1, 9]);
    expect(batches).toEqual([[4, 5], [2], [30], [1, 9]]);
  });

  it('runs what arrives meanwhile together, in order, and a failing batch item by item', async () => {
    const batches: number[][] = [];
    const held = holdingFirst(async (items) => {
      batches.push([...items]);
      if (items.includes(13)) throw new Error('poison');
      return items.map((i) => i * 2);
    });
    const commit = createGroupCommit<number, number>(held.run);
    const outcomes = await firstThenRest((i) => commit.submit(i), held, 1, [2, 13, 4]);
    expect(outcomes.map((o) => (o.status === 'fulfilled' ? o.value : 'failed'))).toEqual([2, 4, 'failed', 8]);
    // The first alone (submitted to an idle committer), the rest together, then one by one.
    expect(batches).toEqual([[1], [2, 13, 4], [2], [13], [4]]);
  });

  it('runs a batch that lost a deadlock item by item, as any failure that is not a lost connection', async () => {
    const batches: number[][] = [];
    const deadlock = Object.assign(new Error('deadlock detected'), {
      name: 'error',
      code: '40P01',
      severity: 'ERROR',
    });
    const held = holdingFirst(async (items) => {
      batches.push([...items]);
      if (items.length > 1) throw deadlock;
      return items;
    });
    const commit = createGroupCommit<number, number>(held.run);
    const outcomes = await firstThenRest((i) => commit.submit(i), held, 1, [2, 3]);
    expect(outcomes.map((o) => (o.status === 'fulfilled' ? o.value : 'failed'))).toEqual([1, 2, 3]);
    expect(batches).toEqual([[1], [2, 3], [2], [3]]);
  });

  it('fails a whole batch at once when the database is unreachable, without running it item by item', async () => {
    const batches: number[][] = [];
    const down = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    const held = holdingFirst(async (items) => {
      batches.push([...items]);
      if (items.length > 1) throw down;
      return items;
    });
    const commit = createGroupCommit<number, number>(held.run);
    const outcomes = await firstThenRest((i) => commit.submit(i), held, 1, [2, 3, 4]);
    expect(outcomes.map((o) => (o.status === 'fulfilled' ? o.value : o.reason))).toEqual([
      1,
      down,
      down,
      down,
    ]);
    expect(batches).toEqual([[1], [2, 3, 4]]);
  });
});
