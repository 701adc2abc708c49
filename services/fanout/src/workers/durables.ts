import { AckPolicy, type ConsumerConfig, DeliverPolicy, type JetStreamManager } from '@nats-io/jetstream';
import { type InstanceId, networkEvent, streamName, webhookReplayStream } from '@switchboard/proto';
import { deleteDurable, ensureDurable } from '@switchboard/proto/bus';

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
      filter_subject: networkEvent.subject(instance),
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
  await ensureDurable(jsm, stream, durableNames.main(webhookId), configs.main, limits);
  await ensureDurable(jsm, stream, durableNames.replay(webhookId), configs.replay, limits);
}

export async function deleteDurables(
  jsm: JetStreamManager,
  instance: InstanceId,
  webhookId: string,
): Promise<void> {
  const stream = streamName(instance, 'events');
  for (const name of [durableNames.main(webhookId), durableNames.replay(webhookId)])
    await deleteDurable(jsm, stream, name);
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
