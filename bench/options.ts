/** The benches' command-line values. */

/**
 * `value` (the text of `--name`) as a whole number from `min`; a clear error otherwise, where
 * `Number` alone would take `''` as 0 and `1e4` or `0x10` as numbers.
 */
export function wholeNumber(value: string, name: string, min: number): number {
  const n = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < min)
    throw new Error(`--${name} must be a whole number from ${min}, got '${value}'`);
  return n;
}
