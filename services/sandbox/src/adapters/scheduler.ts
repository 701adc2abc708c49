/** Timers the engine owns, so closing the sandbox cancels every pending status and retry. */
export interface Scheduler {
  after(ms: number, run: () => void | Promise<void>): void;
  close(): void;
}

export function createScheduler(onError: (err: unknown) => void): Scheduler {
  const timers = new Set<NodeJS.Timeout>();
  let closed = false;
  return {
    after(ms, run) {
      if (closed) return;
      const timer = setTimeout(() => {
        timers.delete(timer);
        Promise.resolve()
          .then(run)
          .catch((err: unknown) => onError(err));
      }, ms);
      timers.add(timer);
    },
    close() {
      closed = true;
      for (const t of timers) clearTimeout(t);
      timers.clear();
    },
  };
}
