import type { Logger } from '@switchboard/kit';
import {
  legacyMediaInboundConsumer,
  mediaFetchConsumer,
  type NetworkEvent,
  networkEvent,
  networkMediaCopyId,
  networkMediaEvent,
} from '@switchboard/proto';
import {
  type BusConsumeOptions,
  type Consumption,
  type DeliveryContext,
  type Disposition,
  isNotFound,
} from '@switchboard/proto/bus';
import { fetchRefused, fetchRetryDelayMs, inboundMediaOf } from '../domain/inbound-media.ts';
import { legacyDurableStep } from '../domain/legacy-durable.ts';
import { type FetchDeps, fetchInboundMedia, reportInboundMediaFailed } from '../use-cases/fetch-inbound.ts';

/** How often the media service looks where the durable of earlier versions stands. */
export const LEGACY_CHECK_MS = 2_000;

type WorkerDeps = FetchDeps & {
  log: Logger;
  /** How long the durable of earlier versions is kept after this process began reading it. */
  legacyGraceMs: number;
};

/**
 * Reads the events chats publishes once it stored a body with customers' files (its
 * `media-fetch` durable), and fetches the file of every customer message that has one. A
 * message is acknowledged only when each of its files is stored and chats knows, or the
 * network refused the file for good (chats records the failure); anything else (the network
 * down, chats or the database unavailable) is retried.
 *
 * Where the durable of earlier versions (`media-inbound`, on every network event) still exists,
 * it is read too (never created) and each body with files on it is forwarded to
 * `events.network_media` under the copy's message id, so JetStream keeps one copy whoever
 * published it and `media-fetch` does the work once. It is deleted after `legacyGraceMs` and
 * once everything before then is forwarded (`legacyDurableStep`).
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
  /** When a forward last found no copy already there: an earlier chats (or a backlog) still matters. */
  const lastNeeded = { at: Date.now() };
  const forward = async (event: NetworkEvent): Promise<undefined> => {
    if (!event.kinds.includes('message') || inboundMediaOf(event.body).length === 0) return undefined;
    const ack = await bus.publish(networkMediaEvent, event, {
      idempotencyKey: networkMediaCopyId(event.event_id),
    });
    if (!ack.duplicate) lastNeeded.at = Date.now();
    return undefined;
  };
  // Never created here: another worker may have retired it meanwhile.
  const earlier = await bus
    .consume(legacyMediaInboundConsumer, forward, { ...options, create: false })
    .catch(async (err: unknown) => {
      if (isNotFound(err)) return undefined;
      await current.stop();
      throw err;
    });
  const legacy = earlier && retireLegacy(deps, earlier, lastNeeded);
  const done = Promise.all([current.done, legacy?.done]).then(() => undefined);
  return {
    done,
    async stop() {
      await Promise.all([current.stop(), legacy?.stop()]);
    },
  };
}

/**
 * Reads the durable of earlier versions until `legacyDurableStep` says it may go, then deletes
 * it. The grace runs from the last forward that found no copy already there (`lastNeeded`): such
 * a body came from an earlier chats, or from before the upgrade, and while they keep coming the
 * durable stays. A current chats publishes its copy before the body reaches the durable, so its
 * forwards come back as duplicates.
 */
function retireLegacy(deps: WorkerDeps, reading: Consumption, lastNeeded: { at: number }): Consumption {
  const { bus, log } = deps;
  let cutoff: number | undefined;
  let stillReading = true;
  let deleting = false;
  let finished = false;
  let checking: Promise<void> | undefined;
  const stopReading = async () => {
    if (!stillReading) return;
    stillReading = false;
    await reading.stop();
  };
  const finish = () => {
    finished = true;
    clearInterval(timer);
  };
  const check = async () => {
    if (!deleting) {
      const step = legacyDurableStep({
        now: Date.now(),
        startedAt: lastNeeded.at,
        graceMs: deps.legacyGraceMs,
        cutoff,
        state: await bus.consumerState(legacyMediaInboundConsumer),
      });
      if (finished || step === 'wait') return;
      if (step === 'take_cutoff') {
        cutoff = await bus.lastSequence(networkEvent);
        return;
      }
      if (step === 'gone') {
        await stopReading();
        return finish();
      }
      // Decided for good before reading stops (new events then pile up on the durable): a
      // failed stop or delete is tried again, not decided again.
      deleting = true;
    }
    await stopReading();
    await bus.deleteConsumer(legacyMediaInboundConsumer);
    finish();
    log.info(
      { durable: legacyMediaInboundConsumer.durable, cutoff },
      'earlier inbound media durable retired',
    );
  };
  const timer = setInterval(() => {
    checking ??= check()
      .catch((err: unknown) => log.warn({ err }, 'earlier inbound media durable: check failed; tried again'))
      .finally(() => {
        checking = undefined;
      });
  }, LEGACY_CHECK_MS);
  return {
    done: reading.done,
    async stop() {
      finish();
      await checking;
      await stopReading();
    },
  };
}

async function fetchFilesOf(
  deps: WorkerDeps,
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
