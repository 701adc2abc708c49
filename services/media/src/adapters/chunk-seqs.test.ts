import { describe, expect, it } from 'vitest';
import { appendChunkSeq, chunkSeqsBetween, formatChunkSeqs, parseChunkSeqs } from './chunk-seqs.ts';

function runsOf(seqs: number[]): number[] {
  const runs: number[] = [];
  for (const seq of seqs) appendChunkSeq(runs, seq);
  return runs;
}

describe('chunk sequence numbers', () => {
  it('keeps consecutive numbers as one run, interleaved ones as several', () => {
    expect(runsOf([7, 8, 9, 10])).toEqual([7, 4]);
    expect(runsOf([7, 9, 10, 14])).toEqual([7, 1, 9, 2, 14, 1]);
    expect(formatChunkSeqs(runsOf([7, 9, 10, 14]))).toBe('7,9-10,14');
  });

  it('reads back what it wrote, for exactly the chunks the object has', () => {
    const runs = runsOf([3, 4, 5, 11, 12, 20]);
    expect(parseChunkSeqs(formatChunkSeqs(runs), 6)).toEqual(runs);
    expect(parseChunkSeqs(formatChunkSeqs(runs), 5)).toBeUndefined();
  });

  it.each([undefined, '', '5-3', '4,4', '9,2', 'a-b', '1-2,', '1;2'])(
    'refuses %j (the chunks are then found one by one)',
    (text) => {
      expect(parseChunkSeqs(text, 2)).toBeUndefined();
    },
  );

  it('answers the numbers of a span of chunks across runs', () => {
    const runs = runsOf([3, 4, 5, 11, 12, 20]);
    expect(chunkSeqsBetween(runs, 0, 5)).toEqual([3, 4, 5, 11, 12, 20]);
    expect(chunkSeqsBetween(runs, 2, 4)).toEqual([5, 11, 12]);
    expect(chunkSeqsBetween(runs, 5, 5)).toEqual([20]);
    expect(chunkSeqsBetween(runs, 3, 3)).toEqual([11]);
  });
});
