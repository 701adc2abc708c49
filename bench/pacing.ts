/** Calls `tick` `rate` times a second for `seconds`, on schedule (no drift), and waits for them all. */
export async function paced(
  rate: number,
  seconds: number,
  tick: (i: number) => Promise<unknown>,
): Promise<void> {
  const total = rate * seconds;
  const start = performance.now();
  const pending: Promise<unknown>[] = [];
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    pending.push(tick(i));
  }
  await Promise.all(pending);
}
