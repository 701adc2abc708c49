import type { InstanceId } from './instance.ts';

export type StreamKey = 'inbound' | 'events' | 'commands';

/** Stream names carry the instance id for the same isolation reason as subjects. */
export function streamName(i: InstanceId, key: StreamKey): string {
  return `sb_${i}_${key}`;
}
