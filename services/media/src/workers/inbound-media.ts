import type { Logger } from '@switchboard/kit';
import { mediaFetchConsumer, type NetworkEvent } from '@switchboard/proto';
import type { BusConsumeOptions, Consumption, DeliveryContext, Disposition } from '@switchboard/proto/bus';
import { fetchRefused, fetchRetryDelayMs, inboundMediaOf } from '../domain/inbound-media.ts';
import { type FetchDeps, fetchInboundMedia, reportInboundMediaFailed } from '../use-cases/fetch-inbound.ts';
import { startLegacyForwarder } from './legacy-forwarder.ts';

type WorkerDeps = FetchDeps & {
  log: Logger;
  /** How long the durable of earlier versions is kept after the last body that needed it. */
  legacyGraceMs: number;
};

/**
 * Reads the events chats publishes once it stored a body with customers' files (its
 * `media-fetch` durable), and fetches the file of every customer message that has one. A
 * message is acknowledged only when each of its files is stored and chats knows, or the
 * network refused the file for good (chats records the failure); anything else (the network
 * down, chats or the database unavailable) is retried. The durable of earlier versions, where
 * it still exists, is forwarded and retired beside it (`startLegacyForwarder`).
 */
export async function startInboundMediaWorker(deps: WorkerDeps): Promise<Consumption> {
  const { bus, log } = deps;
  const options: BusConsumeOptions = {
    onError: (err, at) => log.error({ err, ...at }, 'inbound media not processed'),
    onPullError: (err) => log.warn({ err }, 'events stream not reachable; pulling again'),
  };
  const current = await bus.consume(
    mediaFetchConsumer,
    (event, ctx) => fetchFilesOf(deps, event, ctx),
    options,
  );
  const legacy = await startLegacyForwarder({ bus, log, graceMs: deps.legacyGraceMs, options }).catch(
    async (err: unknown) => {
      await current.stop();
      throw err;
    },
  );
  return {
    done: Promise.all([current.done, legacy?.done]).then(() => undefined),
    async stop() {
      await Promise.all([current.stop(), legacy?.stop()]);
    },
  };
}

async function fetchFilesOf(
  deps: FetchDeps & { log: Logger },
  event: NetworkEvent,
  ctx: DeliveryContext,
): Promise<Disposition | undefined> {
  const { log } = deps;
  const refs = inboundMediaOf(event.body);
  for (const ref of refs) {
    try {
      const media = await fetchInboundMedia(deps, ref);
      log.info({ wamid: ref.wamid, media_id: media.id, size: media.size }, 'inbound media stored');
    } catch (err) {
      if (err instanceof Error && fetchRefused(err, ctx.deliveryCount)) {
        log.warn({ wamid: ref.wamid, err }, 'inbound media cannot be stored');
        try {
          await reportInboundMediaFailed(deps, ref, err);
          continue;
        } catch (reportErr) {
          log.warn({ wamid: ref.wamid, err: reportErr }, 'media failure not recorded yet; retried');
        }
      } else {
        log.warn(
          { wamid: ref.wamid, attempt: ctx.deliveryCount, err },
          'inbound media not stored yet; retried',
        );
      }
      return { kind: 'nak', delayMs: fetchRetryDelayMs(ctx.deliveryCount) };
    }
  }
  return undefined;
}
