import { mediaNetworkUpload, NetworkError, NetworkErrorCode, ServiceError } from '@switchboard/proto';
import type { Bus } from '@switchboard/proto/bus';
import type { NetworkClient } from '@switchboard/proto/network';
import { withNetworkMedia } from '../domain/inbox-media.ts';

/** Putting a large file on the network takes a while: the send's lease is renewed meanwhile. */
const UPLOAD_TIMEOUT_MS = 10 * 60_000;

/**
 * The network client of the delivery worker, sending this inbox's own media files (a media
 * message's, or a template's media parameters) by the network's media id: the media service
 * uploads the bytes (once) and answers the id, so a send works when the network cannot reach
 * the inbox (as under `npm start`). A missing file or one the network refuses fails the send
 * like a network refusal; the media service being unavailable is retried like a network outage.
 */
export function withInboxMedia(
  network: NetworkClient,
  deps: { bus: Bus; publicUrl: string | undefined },
): NetworkClient {
  return {
    ...network,
    async sendMessage(message) {
      const sendable = await withNetworkMedia(message, deps.publicUrl, async (mediaId) => {
        try {
          const uploaded = await deps.bus.request(
            mediaNetworkUpload,
            { media_id: mediaId },
            { timeoutMs: UPLOAD_TIMEOUT_MS },
          );
          return uploaded.network_media_id;
        } catch (err) {
          const refused = err instanceof ServiceError && err.status < 500;
          throw new NetworkError({
            kind: refused ? 'invalid_request' : 'connection',
            operation: 'sendMessage',
            message: refused
              ? `The inbox media file ${mediaId} cannot be sent: ${err.message}`
              : `The inbox media file ${mediaId} could not be uploaded yet: ${err instanceof Error ? err.message : String(err)}`,
            ...(refused ? { code: NetworkErrorCode.mediaUploadError } : {}),
            cause: err,
          });
        }
      });
      return network.sendMessage(sendable);
    },
  };
}
