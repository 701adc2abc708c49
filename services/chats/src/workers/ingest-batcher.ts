import type { Kysely } from 'kysely';
import type { ChatsDatabase } from '../db.ts';
import {
  type FoldedBody,
  foldNetworkWebhooks,
  type InboundBody,
  type StoreOptions,
} from '../store/ingest.ts';

interface Pending {
  body: InboundBody;
  resolve(folded: FoldedBody): void;
  reject(err: unknown): void;
}

/**
 * Group commit for inbound bodies: each handler submits its body and waits; whatever arrived
 * while a fold was running is folded next, in one transaction. An idle worker folds a lone
 * body at once (no timer: batching adds no latency), a busy one folds as many bodies per
 * round trip as arrived meanwhile. When a batch fails, its bodies are folded one by one, so
 * each body's handler sees its own outcome and a poison body cannot fail the others.
 */
export function createIngestBatcher(
  db: Kysely<ChatsDatabase>,
  opts: StoreOptions & { maxBatch?: number } = {},
) {
  const maxBatch = opts.maxBatch ?? 256;
  let queue: Pending[] = [];
  let folding = false;

  async function foldAlone(p: Pending): Promise<void> {
    try {
      const [folded] = await foldNetworkWebhooks(db, [p.body], opts);
      if (folded) p.resolve(folded);
      else p.reject(new Error('fold returned nothing'));
    } catch (err) {
      p.reject(err);
    }
  }

  async function drain(): Promise<void> {
    folding = true;
    try {
      while (queue.length) {
        const batch = queue.slice(0, maxBatch);
        queue = queue.slice(batch.length);
        if (batch.length === 1) {
          await foldAlone(batch[0] as Pending);
          continue;
        }
        try {
          const folded = await foldNetworkWebhooks(
            db,
            batch.map((p) => p.body),
            opts,
          );
          batch.forEach((p, i) => {
            const f = folded[i];
            if (f) p.resolve(f);
            else p.reject(new Error('fold returned nothing'));
          });
        } catch {
          for (const p of batch) await foldAlone(p);
        }
      }
    } finally {
      folding = false;
    }
  }

  return {
    fold(body: InboundBody): Promise<FoldedBody> {
      return new Promise<FoldedBody>((resolve, reject) => {
        queue.push({ body, resolve, reject });
        if (!folding) void drain();
      });
    },
  };
}
