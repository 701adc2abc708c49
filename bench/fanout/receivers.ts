import { type Receiver, startReceiver } from '@switchboard/testkit/tools';

export { deadUrl } from '@switchboard/testkit/tools';

const EVENT_ID = /"id":"(ev-[^"]+)"/;

/**
 * testkit's receiver as the benchmarks measure with it: answers 200 after `delayMs`, takes the
 * event id from the first `"id":"ev-…"` of the body (cheaper than parsing it, and the same for
 * fan-out deliveries and raw posts), and times arrivals with `performance.now()`.
 */
export function startBenchReceiver(delayMs = 0): Promise<Receiver> {
  return startReceiver({
    reply: () => ({ delayMs }),
    eventId: (body) => EVENT_ID.exec(body)?.[1],
    clock: () => performance.now(),
  });
}
