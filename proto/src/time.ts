import { z } from 'zod';

/**
 * Every time in an inbox API response is an integer of POSIX seconds (like the network's own
 * timestamps and `messaging_window_expires_at`). Bus payloads that are not API shapes may keep
 * milliseconds; whoever turns them into a response converts with `posixSeconds`.
 */
export function posixSecondsSchema(description?: string) {
  return z
    .number()
    .int()
    .nonnegative()
    .describe(description ? `POSIX seconds: ${description}` : 'POSIX seconds.');
}

/** A `Date` or epoch milliseconds as POSIX seconds (rounded down). */
export function posixSeconds(t: Date | number): number {
  return Math.floor((typeof t === 'number' ? t : t.getTime()) / 1000);
}

/** `posixSeconds`, keeping an absent time absent. */
export function posixSecondsOrNull(t: Date | number | null | undefined): number | null {
  return t === null || t === undefined ? null : posixSeconds(t);
}

/** An IANA time zone name this runtime knows (`Europe/Berlin`), as `Intl` accepts it. */
export function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}
