import type { MessageMedia } from '@switchboard/proto';
import type { Kysely } from 'kysely';
import type { ChatsDatabase } from '../db.ts';
import { recordMessageMedia } from '../store/media.ts';

/** The media service stored the file of a customer's message (or the network refused it). */
export async function setMessageMedia(
  deps: { db: Kysely<ChatsDatabase> },
  r: { wamid: string; media: MessageMedia },
): Promise<{ updated: boolean }> {
  return { updated: await recordMessageMedia(deps.db, r.wamid, r.media) };
}
