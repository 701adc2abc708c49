import { type MessageMedia, NetworkError, setMessageMedia } from '@switchboard/proto';
import type { Bus } from '@switchboard/proto/bus';
import type { NetworkClient } from '@switchboard/proto/network';
import type { InboundMediaRef } from '../domain/inbound-media.ts';
import { mediaFileView } from '../domain/media-file.ts';
import { findMediaBySourceWamid } from '../store/media-files.ts';
import { type IngestDeps, ingestMedia } from './ingest.ts';

export interface FetchDeps extends IngestDeps {
  bus: Bus;
  network: NetworkClient;
  publicUrl: string;
}

/**
 * Fetches a customer's file from the network (a fresh URL each attempt: they expire), stores it
 * and tells chats. A file already stored for the message is only announced again (a redelivery).
 * Network failures are thrown for the caller to retry or give up.
 */
export async function fetchInboundMedia(deps: FetchDeps, ref: InboundMediaRef): Promise<MessageMedia> {
  let row = await findMediaBySourceWamid(deps.db, ref.wamid);
  if (!row) {
    const info = await deps.network.getMediaUrl(ref.networkMediaId);
    const download = await deps.network.downloadMediaStream(info.url);
    row = await ingestMedia(deps, {
      body: download.body,
      declaredType: info.mime_type || ref.mimeType || download.contentType,
      fileName: ref.fileName,
      declaredSize: download.size,
      origin: 'inbound',
      createdBy: null,
      sourceWamid: ref.wamid,
      // The network already checked the file; what it says it is, it is.
      trustDeclaredType: true,
    });
  }
  const media: MessageMedia = { ...mediaFileView(row, deps.publicUrl), status: 'stored' };
  await deps.bus.request(setMessageMedia, { wamid: ref.wamid, media });
  return media;
}

/** Tells chats the network will not hand the file over. */
export async function reportInboundMediaFailed(
  deps: { bus: Bus },
  ref: InboundMediaRef,
  err: NetworkError | Error,
): Promise<void> {
  const media: MessageMedia = {
    id: null,
    file: null,
    mime_type: ref.mimeType ?? null,
    size: null,
    sha256: null,
    status: 'failed',
    error: {
      code: err instanceof NetworkError ? (err.code ?? err.status ?? null) : null,
      message: err.message,
    },
  };
  await deps.bus.request(setMessageMedia, { wamid: ref.wamid, media });
}
