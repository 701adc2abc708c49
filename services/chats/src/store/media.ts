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

/**
 * The files an import brings for messages an earlier import stored without theirs (the export
 * was first imported without its media, or with a file the media service refused): those
 * messages gain their `media` and the body that links it. A message that has its file keeps it.
 * Answers how many messages gained one.
 */
export async function attachImportedMedia(
  db: Kysely<ChatsDatabase>,
  waId: string,
  rows: readonly { id: string; payload: unknown; media: MessageMedia | null }[],
): Promise<number> {
  const withMedia = rows.filter((r) => r.media !== null);
  if (withMedia.length === 0) return 0;
  const json = JSON.stringify(withMedia.map((r) => ({ id: r.id, payload: r.payload, media: r.media })));
  const result = await sql`
    update messages m set media = u.media, waba_payload = u.payload
    from jsonb_to_recordset(${json}::jsonb) as u(id uuid, payload jsonb, media jsonb)
    where m.id = u.id and m.wa_id = ${waId} and m.media is null
  `.execute(db);
  return Number(result.numAffectedRows ?? 0n);
}
