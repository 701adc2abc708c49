const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * A duration as operators write it: `250ms`, `5s`, `5m`, `2h`, `5d`, or a bare number of
 * milliseconds. Returns undefined for anything else.
 */
export function parseDuration(text: string): number | undefined {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/.exec(text);
  if (!m?.[1]) return undefined;
  const value = Number(m[1]) * (UNIT_MS[m[2] ?? 'ms'] ?? 1);
  return Number.isFinite(value) ? Math.round(value) : undefined;
}

/** A comma-separated list of durations (`0,5s,5m`); undefined when any item is not one. */
export function parseDurationList(text: string): number[] | undefined {
  const items = text.split(',').map((s) => parseDuration(s));
  if (items.length === 0 || items.some((v) => v === undefined)) return undefined;
  return items.filter((v): v is number => v !== undefined);
}
