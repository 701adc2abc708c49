import type { Logger } from '@switchboard/kit';
import { classifyFailure } from '@switchboard/proto';
import { WORKER_RETRY } from '../domain/delivery.ts';
import { backoffMs } from '../domain/retry.ts';

/** How often the mark of a send the network took is tried again while the database is away. */
export const SENT_MARK_RETRY_MAX_MS = 1_000;

export interface PersistOptions {
  what: string;
  log: Logger;
  /**
   * Transient failures are retried without limit and at least every second: the network took
   * the send, and until it is marked, a redelivery or a later send's takeover would send it
   * again. Without it, the write is given up after eight tries (about 90 s).
   */
  untilStored?: boolean;
  sleep?: (ms: number) => Promise<void>;
}

const sleepFor = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Retries a write whose loss would send a message twice, while its failure is transient. */
export async function persistWrite(write: () => Promise<unknown>, opts: PersistOptions): Promise<void> {
  const sleep = opts.sleep ?? sleepFor;
  for (let attempt = 1; ; attempt++) {
    try {
      await write();
      return;
    } catch (err) {
      if (classifyFailure(err).class !== 'transient') throw err;
      if (!opts.untilStored && attempt >= 8) throw err;
      const backoff = backoffMs(attempt, WORKER_RETRY);
      opts.log.warn({ err, attempt }, `${opts.what} not recorded yet; retried`);
      await sleep(opts.untilStored ? Math.min(backoff, SENT_MARK_RETRY_MAX_MS) : backoff);
    }
  }
}
