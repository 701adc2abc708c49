import { ServiceError } from '@switchboard/proto';
import type { NetworkClient } from '@switchboard/proto/network';
import type { Kysely } from 'kysely';
import type { MediaStorage } from '../adapters/storage.ts';
import type { MediaDatabase } from '../db.ts';
import { findMediaFile, recordNetworkMediaId } from '../store/media-files.ts';

/** The network keeps uploaded media 30 days; an id is reused for a safe part of that. */
const NETWORK_MEDIA_REUSE_MS = 25 * 86_400_000;

/**
 * Puts an inbox media file on the network (streamed from the storage) and answers the network's
 * media id; an id the network still keeps is reused.
 */
export async function uploadToNetwork(
  deps: { db: Kysely<MediaDatabase>; storage: MediaStorage; network: NetworkClient; now?: () => Date },
  mediaId: string,
): Promise<{ network_media_id: string; mime_type: string }> {
  const file = await findMediaFile(deps.db, mediaId);
  if (!file) throw new ServiceError('not_found', 'No media file with this id.');
  const now = deps.now?.() ?? new Date();
  if (
    file.network_media_id &&
    file.network_media_at &&
    now.getTime() - file.network_media_at.getTime() < NETWORK_MEDIA_REUSE_MS
  ) {
    return { network_media_id: file.network_media_id, mime_type: file.mime_type };
  }
  const uploaded = await deps.network.uploadMediaStream({
    mimeType: file.mime_type,
    filename: file.file_name ?? undefined,
    open: async () => {
      const body = await deps.storage.read(file.object_key);
      if (!body)
        throw new Error(`media file ${file.id}: object ${file.object_key} is missing from the storage`);
      return body;
    },
  });
  await recordNetworkMediaId(deps.db, file.id, uploaded.id, now);
  return { network_media_id: uploaded.id, mime_type: file.mime_type };
}
