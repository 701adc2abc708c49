/**
 * Where an object's chunks sit in the object store's stream: their sequence numbers, as runs
 * (`[first, count, first, count, …]`; a file written alone is one run, files written side by
 * side interleave). Knowing them, a reader asks for several chunks at once, and a Range read
 * asks only for the chunks it needs.
 */
export type ChunkSeqs = readonly number[];

/** Adds the next chunk's sequence number (they grow: one writer's chunks are stored in order). */
export function appendChunkSeq(runs: number[], seq: number): void {
  const n = runs.length;
  const first = runs[n - 2];
  const count = runs[n - 1];
  if (first !== undefined && count !== undefined && first + count === seq) runs[n - 1] = count + 1;
  else runs.push(seq, 1);
}

/** `12-15,20,22-40`: kept in the object's description (`metadata`), readable by any client. */
export function formatChunkSeqs(runs: ChunkSeqs): string {
  const parts: string[] = [];
  for (let i = 0; i + 1 < runs.length; i += 2) {
    const first = runs[i] ?? 0;
    const count = runs[i + 1] ?? 0;
    parts.push(count === 1 ? String(first) : `${first}-${first + count - 1}`);
  }
  return parts.join(',');
}

const RUN = /^(\d{1,15})(?:-(\d{1,15}))?$/;

/**
 * The runs written by `formatChunkSeqs`, or undefined when the text is not that or does not
 * name exactly `chunks` increasing sequence numbers (then the reader finds the chunks one by one).
 */
export function parseChunkSeqs(text: string | undefined, chunks: number): ChunkSeqs | undefined {
  if (!text) return undefined;
  const runs: number[] = [];
  let total = 0;
  let previous = 0;
  for (const part of text.split(',')) {
    const m = RUN.exec(part);
    if (!m) return undefined;
    const first = Number(m[1]);
    const last = m[2] === undefined ? first : Number(m[2]);
    if (first <= previous || last < first) return undefined;
    runs.push(first, last - first + 1);
    total += last - first + 1;
    previous = last;
  }
  return total === chunks ? runs : undefined;
}

/** The sequence numbers of chunks `from` to `to` (indexes, inclusive). */
export function chunkSeqsBetween(runs: ChunkSeqs, from: number, to: number): number[] {
  const seqs: number[] = [];
  let index = 0;
  for (let i = 0; i + 1 < runs.length && index <= to; i += 2) {
    const first = runs[i] ?? 0;
    const count = runs[i + 1] ?? 0;
    for (let k = Math.max(0, from - index); k < count && index + k <= to; k++) seqs.push(first + k);
    index += count;
  }
  return seqs;
}
