/**
 * Keeps each customer's bodies in stream order across retries. A body that failed is handed back
 * to the stream with a delayed nak (it holds no handler meanwhile), and redeliveries come back in
 * any order; so a body may go only when no earlier body of its customer is still pending here.
 * A later one is handed back too, to come after it. An entry lapses `slackMs` after its retry was
 * due: its body went to another worker, where order across workers is not kept anyway.
 */
export interface OrderGate {
  /** The earliest pending body of `key` before `seq`, with how long until its retry is due. */
  blockedBy(key: string, seq: number): { seq: number; dueInMs: number } | undefined;
  /** The body was handed back to the stream, to come again after `delayMs`. */
  pend(key: string, seq: number, delayMs: number): void;
  /** The body is done with (stored, or kept as a dead letter). */
  done(key: string, seq: number): void;
  /** Customers with pending bodies. */
  readonly size: number;
}

export function createOrderGate(opts: { slackMs: number; now?: () => number }): OrderGate {
  const now = opts.now ?? Date.now;
  const pending = new Map<string, Map<number, number>>();

  function live(key: string): Map<number, number> | undefined {
    const entries = pending.get(key);
    if (!entries) return undefined;
    const t = now();
    for (const [seq, dueAt] of entries) if (dueAt + opts.slackMs <= t) entries.delete(seq);
    if (!entries.size) {
      pending.delete(key);
      return undefined;
    }
    return entries;
  }

  return {
    blockedBy(key, seq) {
      let first: { seq: number; dueAt: number } | undefined;
      for (const [s, dueAt] of live(key) ?? []) {
        if (s < seq && (!first || s < first.seq)) first = { seq: s, dueAt };
      }
      return first && { seq: first.seq, dueInMs: Math.max(0, first.dueAt - now()) };
    },
    pend(key, seq, delayMs) {
      const entries = pending.get(key) ?? new Map<number, number>();
      entries.set(seq, now() + delayMs);
      pending.set(key, entries);
    },
    done(key, seq) {
      const entries = pending.get(key);
      if (!entries) return;
      entries.delete(seq);
      if (!entries.size) pending.delete(key);
    },
    get size() {
      return pending.size;
    },
  };
}
