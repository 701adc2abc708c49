import { describe, expect, it } from 'vitest';
import { readAheadChunks } from './object-store.ts';

describe('readAheadChunks', () => {
  it('bounds what a reader holds in bytes, whatever the chunk size the object was written with', () => {
    expect(readAheadChunks(128 * 1024)).toBe(16);
    expect(readAheadChunks(512 * 1024)).toBe(4);
    // A chunk larger than the whole budget is still read one ahead.
    expect(readAheadChunks(8 * 1024 * 1024)).toBe(1);
    expect(readAheadChunks(0)).toBeGreaterThanOrEqual(1);
  });
});
