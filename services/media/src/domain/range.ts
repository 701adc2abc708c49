/** An inclusive byte range of a file. */
export interface ByteRange {
  readonly start: number;
  readonly end: number;
}

export type RangeVerdict =
  /** No Range header, or one this server ignores (several ranges, another unit): the whole file. */
  { kind: 'whole' } | { kind: 'partial'; range: ByteRange } | { kind: 'unsatisfiable' };

/**
 * A `Range: bytes=…` header against a file of `size` bytes (RFC 9110 §14.1.2): `a-b`, `a-`
 * and the suffix `-n`. Several ranges are answered with the whole file, which the RFC allows.
 */
export function parseRange(header: string | undefined, size: number): RangeVerdict {
  if (header === undefined) return { kind: 'whole' };
  const match = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  if (!match) return { kind: 'whole' };
  const [, first = '', last = ''] = match;
  if (first === '' && last === '') return { kind: 'whole' };
  if (first === '') {
    const suffix = Number(last);
    if (suffix === 0 || size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'partial', range: { start: Math.max(0, size - suffix), end: size - 1 } };
  }
  const start = Number(first);
  const end = last === '' ? size - 1 : Math.min(Number(last), size - 1);
  if (start >= size || (last !== '' && Number(last) < start)) return { kind: 'unsatisfiable' };
  return { kind: 'partial', range: { start, end } };
}

/** Whether `If-None-Match` names this ETag (or `*`). */
export function etagMatches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(',').some((t) => {
    const tag = t.trim().replace(/^W\//, '');
    return tag === '*' || tag === etag;
  });
}
