import type { MessageMedia } from '@switchboard/proto';
import { type Kysely, sql } from 'kysely';
import type { ChatsDatabase } from '../db.ts';

/**
 * Records the file of a customer's message. A stored file is never replaced by a later failure
 * report (a redelivered failure after a successful retry); anything else takes the latest.
 */
export async function recordMessageMedia(
  db: Kysely<ChatsDatabase>,
  wamid: string,
  media: MessageMedia,
): Promise<boolean> {
  let update = db
    .updateTable('messages')
    .set({ media: JSON.stringify(media) })
    .where('wamid', '=', wamid)
    .where('from_us', '=', false);
  if (media.status === 'failed') {
    update = update.where(sql<boolean>`coalesce(media->>'status', '') <> 'stored'`);
  }
  const result = await update.executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}
