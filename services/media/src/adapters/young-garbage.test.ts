import { describe, expect, it } from 'vitest';
import { youngGarbageCollector } from './young-garbage.ts';

describe('youngGarbageCollector', () => {
  it('collects the young generation once per `everyBytes` moved', () => {
    const calls: unknown[] = [];
    const moved = youngGarbageCollector(100, ((options?: unknown) => {
      calls.push(options);
    }) as NodeJS.GCFunction);
    moved(60);
    expect(calls).toEqual([]);
    moved(40);
    expect(calls).toEqual([{ type: 'minor' }]);
    moved(99);
    expect(calls).toHaveLength(1);
    moved(250);
    expect(calls).toHaveLength(2);
  });

  it('does nothing where the process does not expose gc', () => {
    expect(() => youngGarbageCollector(1, undefined)(10)).not.toThrow();
  });
});
