import type { Logger } from '@switchboard/kit';
import {
  legacyMediaInboundConsumer,
  type NetworkEvent,
  networkEvent,
  networkMediaCopyId,
  networkMediaEvent,
} from '@switchboard/proto';
import { type Bus, type BusConsumeOptions, type Consumption, isNotFound } from '@switchboard/proto/bus';
import { inboundMediaOf } from '../domain/inbound-media.ts';
import { type LegacyDurableView, legacyDurableStep } from '../domain/legacy-durable.ts';

/** How often the media service looks where the durable of earlier versions stands. */
export const LEGACY_CHECK_MS = 2_000;

/**
 * Where the durable of earlier versions (`media-inbound`, on every network event) still exists:
 * reads it (never creating it: another worker may have retired it) and forwards each body with
 * files on it to `events.network_media` under the copy's message id, so JetStream keeps one copy
 * whoever published it and `media-fetch` fetches once; deletes it when `legacyDurableStep` says
 * so. The grace starts again whenever a forward finds no copy already there: that body came from
 * an earlier chats (or from before the upgrade), since a current chats publishes its copy before
 * the body reaches this durable. (A body whose files media's parser finds but chats' does not, a
 * malformed one, starts it again too: that only delays the retirement.) Undefined when there is
 * no such durable.
 */
export async function startLegacyForwarder(deps: {
  bus: Bus;
  log: Logger;
  graceMs: number;
  options: BusConsumeOptions;
}): Promise<Consumption | undefined> {
  const { bus, log } = deps;
  let graceFrom = Date.now();
  let cutoff: LegacyDurableView['cutoff'];
  const forward = async (event: NetworkEvent): Promise<undefined> => {
    if (!event.kinds.includes('message') || inboundMediaOf(event.body).length === 0) return undefined;
    const ack = await bus.publish(networkMediaEvent, event, {
      idempotencyKey: networkMediaCopyId(event.event_id),
    });
    if (!ack.duplicate) graceFrom = Date.now();
    return undefined;
  };
  const reading = await bus
    .consume(legacyMediaInboundConsumer, forward, { ...deps.options, create: false })
    .catch((err: unknown) => {
      if (isNotFound(err)) return undefined;
      throw err;
    });
  if (!reading) return undefined;

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
        graceFrom,
        graceMs: deps.graceMs,
        cutoff,
        state: await bus.consumerState(legacyMediaInboundConsumer),
      });
      if (finished || step === 'wait') return;
      if (step === 'take_cutoff') {
        const takenFor = graceFrom;
        cutoff = { seq: await bus.lastSequence(networkEvent), graceFrom: takenFor };
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
