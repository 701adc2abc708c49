import type { Logger } from '@switchboard/kit';
import { legacyMediaInboundConsumer, mediaInboundConsumer, type NetworkEvent } from '@switchboard/proto';
import {
  type BusConsumeOptions,
  type Consumption,
  type DeliveryContext,
  type Disposition,
  isNotFound,
} from '@switchboard/proto/bus';
import { fetchRefused, fetchRetryDelayMs, inboundMediaOf } from '../domain/inbound-media.ts';
import { type FetchDeps, fetchInboundMedia, reportInboundMediaFailed } from '../use-cases/fetch-inbound.ts';

/** How often the media service looks whether the durable it read before is drained. */
export const LEGACY_DRAIN_CHECK_MS = 2_000;

/**
 * Reads the events chats publishes once it stored a body with customers' files (its
 * `media-fetch` durable), and fetches the file of every customer message that has one. A
 * message is acknowledged only when each of its files is stored and chats knows, or the
 * network refused the file for good (chats records the failure); anything else (the network
 * down, chats or the database unavailable) is retried.
 *
 * Where the durable of earlier versions (`media-inbound`, on every network event) still exists,
 * it is read too until nothing is left on it, and then deleted: a body published before the
 * upgrade is fetched from there (one published since is on both, and a second fetch of a
 * stored file only tells chats again).
 */
export async function startInboundMediaWorker(deps: FetchDeps & { log: Logger }): Promise<Consumption> {
  const { bus, log } = deps;
  const handle = (event: NetworkEvent, ctx: DeliveryContext) => fetchFilesOf(deps, event, ctx);
  const options: BusConsumeOptions = {
    onError: (err, at) => log.error({ err, ...at }, 'inbound media not processed'),
    onPullError: (err) => log.warn({ err }, 'events stream not reachable; pulling again'),
  };
  const current = await bus.consume(mediaInboundConsumer, handle, options);
  // Never created here: another worker may have drained and deleted it meanwhile.
  const earlier = await bus
    .consume(legacyMediaInboundConsumer, handle, { ...options, create: false })
    .catch(async (err: unknown) => {
      if (isNotFound(err)) return undefined;
      await current.stop();
      throw err;
    });
  const legacy = earlier && drainLegacy(deps, earlier);
  const done = Promise.all([current.done, legacy?.done]).then(() => undefined);
  return {
    done,
    async stop() {
      await Promise.all([current.stop(), legacy?.stop()]);
    },
  };
}

/** Stops reading the earlier durable and deletes it once nothing is left on it. */
function drainLegacy(deps: FetchDeps & { log: Logger }, consumption: Consumption): Consumption {
  const { bus, log } = deps;
  let stopped = false;
  let checking: Promise<void> | undefined;
  const check = async () => {
    const backlog = await bus.consumerBacklog(legacyMediaInboundConsumer);
    if (stopped || (backlog && (backlog.pending > 0 || backlog.ackPending > 0))) return;
    stopped = true;
    clearInterval(timer);
    await consumption.stop();
    await bus.deleteConsumer(legacyMediaInboundConsumer);
    log.info(
      { durable: legacyMediaInboundConsumer.durable },
      'earlier inbound media durable drained and deleted',
    );
  };
  const timer = setInterval(() => {
    checking ??= check()
      .catch((err: unknown) =>
        log.warn({ err }, 'earlier inbound media durable: drain check failed; tried again'),
      )
      .finally(() => {
        checking = undefined;
      });
  }, LEGACY_DRAIN_CHECK_MS);
  return {
    done: consumption.done,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await checking;
      await consumption.stop();
    },
  };
}

async function fetchFilesOf(
  deps: FetchDeps & { log: Logger },
  event: NetworkEvent,
  ctx: DeliveryContext,
): Promise<Disposition | undefined> {
  const { log } = deps;
  if (!event.kinds.includes('message')) return undefined;
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
