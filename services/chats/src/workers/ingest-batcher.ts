import type { Kysely } from 'kysely';
import type { ChatsDatabase } from '../db.ts';
import { createGroupCommit } from '../domain/group-commit.ts';
import {
  type FoldedBody,
  foldNetworkWebhooks,
  type InboundBody,
  type StoreOptions,
} from '../store/ingest.ts';

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
    },
  );
  return { fold: (body: InboundBody): Promise<FoldedBody> => commit.submit(body) };
}
