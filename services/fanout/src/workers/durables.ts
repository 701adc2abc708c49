import {
  AckPolicy,
  type ConsumerConfig,
  type ConsumerInfo,
  DeliverPolicy,
  JetStreamApiError,
  type JetStreamManager,
} from '@nats-io/jetstream';
import { type InstanceId, networkEventsFilter, streamName, webhookReplayStream } from '@switchboard/proto';

const MAIN_PREFIX = 'fanout-wh-';
const REPLAY_PREFIX = 'fanout-wr-';

export const durableNames = {
  main: (webhookId: string) => `${MAIN_PREFIX}${webhookId}`,
  replay: (webhookId: string) => `${REPLAY_PREFIX}${webhookId}`,
} as const;

/** The webhook id a fan-out durable belongs to, or undefined for any other consumer. */
export function webhookIdOfDurable(name: string): string | undefined {
  if (name.startsWith(MAIN_PREFIX)) return name.slice(MAIN_PREFIX.length);
  if (name.startsWith(REPLAY_PREFIX)) return name.slice(REPLAY_PREFIX.length);
  return undefined;
}

export interface DurableSettings {
  readonly ackWaitMs: number;
  readonly concurrency: number;
}

const NANOS_PER_MS = 1_000_000;

export function maxAckPending(settings: DurableSettings, ordered: boolean): number {
  return ordered ? 1 : settings.concurrency;
}

/**
 * The two durables of one webhook. Measured on nats-server 2.9 (DESIGN.md): one filter subject,
 * explicit ack, no `backoff` (a plain nak ignores it and it overrides AckWait), no
 * `inactive_threshold` (2.9 deletes idle durables), MaxDeliver unlimited (the attempt limit is
 * ours). max_ack_pending is the webhook's in-flight limit across every fanout process, and a
 * delayed nak keeps its slot: a failing endpoint holds back only itself.
 */
export function durableConfigs(
  instance: InstanceId,
  webhookId: string,
  ordered: boolean,
  settings: DurableSettings,
): { main: Partial<ConsumerConfig>; replay: Partial<ConsumerConfig> } {
  const common = {
    ack_policy: AckPolicy.Explicit,
    ack_wait: settings.ackWaitMs * NANOS_PER_MS,
    max_ack_pending: maxAckPending(settings, ordered),
    max_deliver: -1,
  };
  return {
    main: {
      ...common,
      durable_name: durableNames.main(webhookId),
      description: `switchboard fan-out to webhook ${webhookId}`,
      // Only events published after the webhook exists.
      deliver_policy: DeliverPolicy.New,
      // Both network event subjects (customer messages, statuses and the rest), in stream order.
      filter_subject: networkEventsFilter(instance),
    },
    replay: {
      ...common,
      durable_name: durableNames.replay(webhookId),
      description: `switchboard replays for webhook ${webhookId}`,
      // The subject belongs to this webhook alone; a replay queued before the durable existed still counts.
      deliver_policy: DeliverPolicy.All,
      filter_subject: webhookReplayStream(webhookId).subject(instance),
    },
  };
}

function isNotFound(err: unknown): boolean {
  return err instanceof JetStreamApiError && err.status === 404;
}

async function ensureOne(
  jsm: JetStreamManager,
  stream: string,
  name: string,
  config: Partial<ConsumerConfig>,
  limits: { ack_wait: number; max_ack_pending: number },
): Promise<void> {
  for (let round = 0; ; round++) {
    try {
      const info = await jsm.consumers.info(stream, name);
      if (config.filter_subject !== undefined && info.config.filter_subject !== config.filter_subject) {
        await refilter(jsm, stream, name, config, await firstUnsettled(jsm, stream, info));
      } else if (
        info.config.ack_wait !== limits.ack_wait ||
        info.config.max_ack_pending !== limits.max_ack_pending
      ) {
        await jsm.consumers.update(stream, name, limits);
      }
      return;
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    try {
      await jsm.consumers.add(stream, config);
      return;
    } catch (err) {
      // Another process created it between our info and add: read it again once.
      if (round > 0) throw err;
    }
  }
}

/**
 * The stream sequence from which a durable has not settled everything: right after its ack
 * floor, or after all it delivered when nothing is pending. nats-server 2.9 reports an ack
 * floor of 0 until the first ack, so a durable that has delivered without ever being acked has
 * its first unsettled message found by walking back from the last delivered one over its
 * filter's messages (at most max_ack_pending of them are pending).
 */
async function firstUnsettled(jsm: JetStreamManager, stream: string, info: ConsumerInfo): Promise<number> {
  if (info.num_ack_pending === 0) return info.delivered.stream_seq + 1;
  if (info.ack_floor.consumer_seq > 0) return info.ack_floor.stream_seq + 1;
  let pending = info.num_ack_pending;
  for (let seq = info.delivered.stream_seq; seq > 0; seq--) {
    const m = await jsm.streams.getMessage(stream, { seq }).catch((err: unknown) => {
      if (isNotFound(err)) return null;
      throw err;
    });
    if (m?.subject === info.config.filter_subject && --pending === 0) return seq;
  }
  return 1;
}

/**
 * Gives a durable a new filter: a durable made while every network event had one subject is
 * made again on the filter that takes both (`networkEventsFilter`). Not by updating it: on
 * nats-server 2.9.10 a consumer whose filter was updated reports its pending messages but
 * delivers none, ever (measured). The new durable starts at the old one's first unsettled
 * message, so nothing it had not settled is lost; what it had settled after that (out of order) is
 * delivered again with the same `webhook-id`, as after any redelivery. Two processes doing
 * this at once can only each start at a floor at or below what was settled: duplicates, no loss.
 */
async function refilter(
  jsm: JetStreamManager,
  stream: string,
  name: string,
  config: Partial<ConsumerConfig>,
  startSeq: number,
): Promise<void> {
  try {
    await jsm.consumers.delete(stream, name);
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  try {
    await jsm.consumers.add(stream, {
      ...config,
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: startSeq,
    });
  } catch (err) {
    // Another process made it again first.
    if (!(err instanceof JetStreamApiError)) throw err;
    await jsm.consumers.info(stream, name);
  }
}

/** Creates the webhook's durables, or brings their limits in line with the settings. */
export async function ensureDurables(
  jsm: JetStreamManager,
  instance: InstanceId,
  webhookId: string,
  ordered: boolean,
  settings: DurableSettings,
): Promise<void> {
  const stream = streamName(instance, 'events');
  const configs = durableConfigs(instance, webhookId, ordered, settings);
  const limits = {
    ack_wait: settings.ackWaitMs * NANOS_PER_MS,
    max_ack_pending: maxAckPending(settings, ordered),
  };
  await ensureOne(jsm, stream, durableNames.main(webhookId), configs.main, limits);
  await ensureOne(jsm, stream, durableNames.replay(webhookId), configs.replay, limits);
}

export async function deleteDurables(
  jsm: JetStreamManager,
  instance: InstanceId,
  webhookId: string,
): Promise<void> {
  const stream = streamName(instance, 'events');
  for (const name of [durableNames.main(webhookId), durableNames.replay(webhookId)]) {
    try {
      await jsm.consumers.delete(stream, name);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}

/** Webhook ids that have at least one fan-out durable on the events stream. */
export async function listDurableWebhookIds(
  jsm: JetStreamManager,
  instance: InstanceId,
): Promise<Set<string>> {
  const ids = new Set<string>();
  const lister = jsm.consumers.list(streamName(instance, 'events'));
  for await (const info of lister) {
    const id = webhookIdOfDurable(info.name);
    if (id) ids.add(id);
  }
  return ids;
}
