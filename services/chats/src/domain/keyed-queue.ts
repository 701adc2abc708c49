/**
 * Runs tasks one after another per key and concurrently across keys: bodies of one customer
 * are stored in the order the stream delivered them, while other customers go on in parallel.
 */
export function createKeyedQueue() {
  const tails = new Map<string, Promise<unknown>>();
  return {
    run<T>(key: string, task: () => Promise<T>): Promise<T> {
      const previous = tails.get(key) ?? Promise.resolve();
      const result = previous.then(task, task);
      const tail = result.catch(() => undefined);
      tails.set(key, tail);
      void tail.then(() => {
        if (tails.get(key) === tail) tails.delete(key);
      });
      return result;
    },
    /** Keys with work queued or running. */
    get size(): number {
      return tails.size;
    },
  };
}
