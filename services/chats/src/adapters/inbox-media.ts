import {
  type Bus,
  mediaNetworkUpload,
  type NetworkClient,
  NetworkError,
  NetworkErrorCode,
  ServiceError,
} from '@switchboard/proto';
import { inboxMediaOf, withNetworkMediaId } from '../domain/inbox-media.ts';

/** Putting a large file on the network takes a while: the send's lease is renewed meanwhile. */
const UPLOAD_TIMEOUT_MS = 10 * 60_000;

/**
 * The network client of the delivery worker, sending this inbox's own media files by the
 * network's media id: the media service uploads the bytes (once) and answers the id, so a send
 * works when the network cannot reach the inbox (as under `npm start`). A missing file or one the
 * network refuses fails the send like a network refusal; the media service being unavailable is
 * retried like a network outage.
 */
export function withInboxMedia(
  network: NetworkClient,
  deps: { bus: Bus; publicUrl: string | undefined },
): NetworkClient {
  return {
    ...network,
    async sendMessage(message) {
      const ref = inboxMediaOf(message as Record<string, unknown>, deps.publicUrl);
      if (!ref) return network.sendMessage(message);
      let networkMediaId: string;
      try {
        ({ network_media_id: networkMediaId } = await deps.bus.request(
          mediaNetworkUpload,
          { media_id: ref.mediaId },
          { timeoutMs: UPLOAD_TIMEOUT_MS },
        ));
      } catch (err) {
        const refused = err instanceof ServiceError && err.status < 500;
        throw new NetworkError({
          kind: refused ? 'invalid_request' : 'connection',
          operation: 'sendMessage',
          message: refused
            ? `The inbox media file ${ref.mediaId} cannot be sent: ${err.message}`
            : `The inbox media file ${ref.mediaId} could not be uploaded yet: ${err instanceof Error ? err.message : String(err)}`,
          ...(refused ? { code: NetworkErrorCode.mediaUploadError } : {}),
          cause: err,
        });
      }
      return network.sendMessage(withNetworkMediaId(message, ref, networkMediaId));
    },
  };
}
