/** Percentile by nearest rank over a copy of the samples; NaN when there are none. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] ?? Number.NaN;
}

export interface LatencySummary {
  count: number;
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
}

export function summarise(latencies: readonly number[]): LatencySummary {
  return {
    count: latencies.length,
    p50_ms: round(percentile(latencies, 50)),
    p99_ms: round(percentile(latencies, 99)),
    max_ms: round(latencies.length ? Math.max(...latencies) : Number.NaN),
  };
}

export function round(n: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}
