import type { Kysely } from 'kysely';
import type { ChatsDatabase } from '../db.ts';
import { createGroupCommit } from '../domain/group-commit.ts';
import {
  type FoldedBody,
  foldNetworkWebhooks,
  type InboundBody,
  type StoreOptions,
} from '../store/ingest.ts';

/** Body text one fold takes at most (a body larger than this is folded alone). */
const MAX_BATCH_BODY_CHARS = 16 * 1024 * 1024;

/**
 * Group commit for inbound bodies (`domain/group-commit.ts`): whatever arrived while a fold was
 * running is folded next, in one transaction; a failed batch is folded body by body, so a
 * poison body fails alone.
 */
export function createIngestBatcher(
  db: Kysely<ChatsDatabase>,
  opts: StoreOptions & { maxBatch?: number } = {},
) {
  const commit = createGroupCommit<InboundBody, FoldedBody>(
    (bodies) => foldNetworkWebhooks(db, bodies, opts),
    {
      maxBatch: opts.maxBatch ?? 256,
      // Each body goes into the statement as text (and once more only when it must).
      sizeOf: (body) => body.raw.body.length,
      maxSize: MAX_BATCH_BODY_CHARS,
    },
  );
  return { fold: (body: InboundBody): Promise<FoldedBody> => commit.submit(body) };
}
