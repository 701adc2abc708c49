import { percentile, round } from '../stats.ts';

export function summary(latenciesMs: readonly number[], elapsedMs: number) {
  return {
    count: latenciesMs.length,
    per_second: round((latenciesMs.length / elapsedMs) * 1000, 1),
    p50_ms: round(percentile(latenciesMs, 50)),
    p99_ms: round(percentile(latenciesMs, 99)),
  };
}

/** Runs `task(i)` for i in [0, n) with at most `concurrency` in flight; returns each task's duration. */
export async function runConcurrent(
  n: number,
  concurrency: number,
  task: (i: number) => Promise<void>,
): Promise<number[]> {
  const durations: number[] = new Array(n);
  let next = 0;
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= n) return;
      const t0 = performance.now();
      await task(i);
      durations[i] = performance.now() - t0;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return durations;
}
