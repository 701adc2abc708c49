/**
 * `Retry-After` as delta-seconds or an HTTP-date, in milliseconds from `nowMs`.
 * Undefined when absent or unreadable; a date in the past means "now" (0).
 */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (text === '') return undefined;
  if (/^\d+$/.test(text)) {
    const seconds = Number(text);
    return Number.isSafeInteger(seconds) ? seconds * 1_000 : undefined;
  }
  // Only an HTTP-date is valid here; Date.parse would also accept bare numbers with signs or decimals.
  if (!/[a-z]/i.test(text)) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}
