export interface RateWindow {
  windowStartMs: number;
  count: number;
}

/** A one-second fixed window: true when one more message fits, and counts it. */
export function takeRateSlot(window: RateWindow, limitPerSecond: number, nowMs: number): boolean {
  if (limitPerSecond <= 0) return true;
  if (nowMs - window.windowStartMs >= 1000) {
    window.windowStartMs = nowMs;
    window.count = 0;
  }
  if (window.count >= limitPerSecond) return false;
  window.count += 1;
  return true;
}

/** Whole seconds until the current window ends (at least 1), for Retry-After. */
export function secondsUntilNextWindow(window: RateWindow, nowMs: number): number {
  return Math.max(1, Math.ceil((window.windowStartMs + 1000 - nowMs) / 1000));
}
