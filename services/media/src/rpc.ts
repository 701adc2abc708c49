import type { Logger } from '@switchboard/kit';
import { mediaNetworkUpload, NetworkError, ServiceError } from '@switchboard/proto';
import type { Bus } from '@switchboard/proto/bus';
import type { NetworkClient } from '@switchboard/proto/network';
import type { Kysely } from 'kysely';
import type { MediaStorage } from './adapters/storage.ts';
import type { MediaDatabase } from './db.ts';
import { uploadToNetwork } from './use-cases/network-upload.ts';

/** The media requests: each contract to its use case. */
export function startRpc(deps: {
  db: Kysely<MediaDatabase>;
  bus: Bus;
  log: Logger;
  storage: MediaStorage;
  network: NetworkClient;
}): Array<{ unsubscribe(): void }> {
  return [
    deps.bus.serve(
      mediaNetworkUpload,
      async (r) => {
        try {
          return await uploadToNetwork(deps, r.media_id);
        } catch (err) {
          // The caller (the send) retries an outage and fails on a refusal: say which it was.
          if (err instanceof NetworkError) {
            if (err.retryable) throw ServiceError.unavailable('network', err.message, { cause: err });
            throw new ServiceError('unsupported_media_type', err.message, {
              details: { network_code: err.code ?? null },
              cause: err,
            });
          }
          throw err;
        }
      },
      { queue: 'media' },
    ),
  ];
}
