import { DiscardPolicy, RetentionPolicy, StorageType, type StreamConfig } from '@nats-io/jetstream';
import type { InstanceId } from './instance.ts';
import { streamName } from './streams.ts';

const SECOND_NS = 1_000_000_000;
const DAY_NS = 86_400 * SECOND_NS;

/**
 * Retention is by limits and age, never by interest: the fan-out keeps one durable consumer
 * per webhook and retries for days, so events must outlive the longest retry window.
 */
export function streamConfigs(
  i: InstanceId,
  replicas = 1,
): Array<Partial<StreamConfig> & { name: string; subjects: string[] }> {
  const common = {
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    discard: DiscardPolicy.Old,
    // 3 on a JetStream cluster (deploy/nats), 1 on a single server.
    num_replicas: replicas,
    // Network bodies can reach 3 MB; the server's max_payload must be raised to match.
    max_msg_size: 4 * 1024 * 1024,
  } as const;
  return [
    {
      ...common,
      name: streamName(i, 'inbound'),
      subjects: [`sb.${i}.waba.>`],
      max_age: 7 * DAY_NS,
      // The network redelivers the same body when it misses our 200; a two-hour window
      // catches those redeliveries by msg id without unbounded memory.
      duplicate_window: 2 * 3600 * SECOND_NS,
    },
    {
      ...common,
      name: streamName(i, 'events'),
      subjects: [`sb.${i}.events.>`],
      // Covers the fan-out's default retry schedule (about 38 hours) with room to replay.
      max_age: 7 * DAY_NS,
      duplicate_window: 2 * 3600 * SECOND_NS,
    },
    {
      ...common,
      name: streamName(i, 'commands'),
      subjects: [`sb.${i}.cmd.>`],
      max_age: 7 * DAY_NS,
      duplicate_window: 24 * 3600 * SECOND_NS,
    },
  ];
}
