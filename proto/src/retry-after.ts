/**
 * The one reader of `Retry-After` (the network's throttling answers, webhook endpoints'
 * 429/503): delta-seconds or an HTTP-date (RFC 9110 section 10.2.3), in milliseconds from `nowMs`.
 * Undefined when absent or unreadable; a date in the past means "now" (0).
 */
export function parseRetryAfter(value: string | undefined, nowMs = Date.now()): number | undefined {
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
