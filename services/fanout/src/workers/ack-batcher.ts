/**
 * Gathers acks, naks and terms for up to `delayMs` and sends them together. The NATS client
 * writes to its socket once per burst of commands, and one socket write per delivered
 * message was the largest CPU cost of a fan-out process under load. Shared by every
 * consumer loop of a process, so one write carries the acks of all webhooks.
 */
export interface AckBatcher {
  /** Runs `send` (an ack, nak or term) with the next batch. */
  add(send: () => void): void;
  /** Sends everything queued now. */
  flush(): void;
}

export function createAckBatcher(delayMs = 1): AckBatcher {
  let queued: Array<() => void> = [];
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    clearTimeout(timer);
    timer = undefined;
    const batch = queued;
    queued = [];
    for (const send of batch) send();
  };
  return {
    add(send) {
      queued.push(send);
      timer ??= setTimeout(flush, delayMs);
    },
    flush,
  };
}
