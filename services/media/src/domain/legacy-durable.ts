import type { ConsumerState } from '@switchboard/proto/bus';

/**
 * When the media service may delete the durable of earlier versions (`media-inbound`, on every
 * network event). While an earlier chats may still run, a body with files it stores exists only
 * on `events.network`, and that durable is what carries it over (it is forwarded to
 * `events.network_media`). So the durable stays for a grace after the last body that needed the
 * forward (every chats of the instance is upgraded by then); after the grace, the stream's last
 * sequence becomes the cutoff, and the durable goes once everything up to the cutoff is
 * acknowledged (or nothing at all is left on it). A grace that starts again (another body
 * needed the forward) makes an earlier cutoff void.
 */
export type LegacyDurableStep =
  /** It does not exist (any more): nothing to read. */
  | 'gone'
  /** Keep reading. */
  | 'wait'
  /** The grace is over: take the stream's last sequence as the cutoff. */
  | 'take_cutoff'
  /** Everything up to the cutoff is handled: stop reading and delete it. */
  | 'delete';

export interface LegacyDurableView {
  readonly now: number;
  /**
   * When the grace began: when this process began reading the durable, or later, when a body it
   * forwarded last found no copy already there (an earlier chats still stores bodies).
   */
  readonly graceFrom: number;
  readonly graceMs: number;
  /** The stream's last sequence when a grace ended, and which grace (its `graceFrom`). */
  readonly cutoff: { readonly seq: number; readonly graceFrom: number } | undefined;
  /** The durable's state; null when it does not exist. */
  readonly state: ConsumerState | null;
}

export function legacyDurableStep(v: LegacyDurableView): LegacyDurableStep {
  if (!v.state) return 'gone';
  if (v.now - v.graceFrom < v.graceMs) return 'wait';
  if (v.cutoff?.graceFrom !== v.graceFrom) return 'take_cutoff';
  const empty = v.state.pending === 0 && v.state.ackPending === 0;
  return v.state.ackFloor >= v.cutoff.seq || empty ? 'delete' : 'wait';
}
