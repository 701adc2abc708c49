import type { Logger } from '@switchboard/kit';
import { mediaInboundConsumer } from '@switchboard/proto';
import type { Consumption } from '@switchboard/proto/bus';
import { fetchRefused, fetchRetryDelayMs, inboundMediaOf } from '../domain/inbound-media.ts';
import { type FetchDeps, fetchInboundMedia, reportInboundMediaFailed } from '../use-cases/fetch-inbound.ts';

/**
 * Reads the network events chats publishes once it stored a body, and fetches the file of
 * every customer message that has one. A message is acknowledged only when each of its files
 * is stored and chats knows, or the network refused the file for good (chats records the
 * failure); anything else (the network down, chats or the database unavailable) is retried.
 */
export async function startInboundMediaWorker(deps: FetchDeps & { log: Logger }): Promise<Consumption> {
  const { bus, log } = deps;
  return bus.consume(
    mediaInboundConsumer,
    async (event, ctx) => {
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
    },
    {
      onError: (err, at) => log.error({ err, ...at }, 'inbound media not processed'),
      onPullError: (err) => log.warn({ err }, 'events stream not reachable; pulling again'),
    },
  );
}
