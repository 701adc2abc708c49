/**
 * Collects the young generation after every `everyBytes` a transfer moves, when the process
 * exposes `gc` (`node --expose-gc`; otherwise nothing happens).
 *
 * Moving bytes makes garbage outside the JavaScript heap (each buffer the HTTP parser reads,
 * each chunk the NATS client copies or assembles) and few JavaScript objects, so V8 seldom
 * collects the young generation on its own, and frees such buffers only at a full collection,
 * which it starts after some 64 MB of them. A young collection frees the buffers that died
 * young, which is nearly all of them, in about a millisecond: one per 8 MB moved keeps a
 * transfer's garbage to about that much.
 */
export function youngGarbageCollector(
  everyBytes = 8 * 1024 * 1024,
  collect: NodeJS.GCFunction | undefined = globalThis.gc,
): (bytes: number) => void {
  if (!collect) return () => undefined;
  let moved = 0;
  return (bytes) => {
    moved += bytes;
    if (moved < everyBytes) return;
    moved = 0;
    collect({ type: 'minor' });
  };
}
