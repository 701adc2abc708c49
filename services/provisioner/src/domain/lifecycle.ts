import type { InstanceStatus } from '@switchboard/proto';

/**
 * An instance's lifecycle: `provisioning` → `ready` | `failed`, and `deleted` from any of them.
 * What is left to do is derived from what is recorded as done, never from a step counter, so a
 * step that ran twice (a redelivered command, a restarted provisioner) finds its work done.
 */
export type LifecycleEvent = { type: 'healthy' } | { type: 'failed' } | { type: 'deleted' };

export class IllegalTransitionError extends Error {
  override readonly name = 'IllegalTransitionError';
}

const transitions: Record<InstanceStatus, Partial<Record<LifecycleEvent['type'], InstanceStatus>>> = {
  provisioning: { healthy: 'ready', failed: 'failed', deleted: 'deleted' },
  ready: { healthy: 'ready', deleted: 'deleted' },
  failed: { failed: 'failed', deleted: 'deleted' },
  deleted: { deleted: 'deleted' },
};

export function transition(from: InstanceStatus, event: LifecycleEvent): InstanceStatus {
  const to = transitions[from][event.type];
  if (!to) throw new IllegalTransitionError(`an instance that is ${from} cannot become ${event.type}`);
  return to;
}

/** What the provisioner has recorded about one instance. */
export interface Progress {
  status: InstanceStatus;
  /** A provider key is known (given, or collected from the partner hub). */
  keyResolved: boolean;
  /** The key's business number is known and claimed for this instance. */
  numberClaimed: boolean;
  /** Database and streams exist. */
  allocated: boolean;
  /** The runtime reports the instance running. */
  running: boolean;
  /** The health check answered 200 since the provisioner last started it. */
  healthy: boolean;
  wantsToken: boolean;
  tokenSent: boolean;
  wantsMail: boolean;
  mailSent: boolean;
  /** An errors event is owed to the partner (creation failed) and not yet delivered. */
  errorsOwed: boolean;
}

export type Step =
  | 'resolve_key'
  | 'claim_number'
  | 'allocate'
  | 'start'
  | 'await_health'
  | 'send_token'
  | 'send_activation_mail'
  | 'send_errors'
  | 'scale_to_zero';

/** The next step for an instance, or `undefined` when nothing is left. */
export function nextStep(p: Progress): Step | undefined {
  if (p.status === 'deleted') return p.running ? 'scale_to_zero' : undefined;
  // A failure recorded before its process was stopped (a crash between the two) is stopped still.
  if (p.status === 'failed') return p.running ? 'scale_to_zero' : p.errorsOwed ? 'send_errors' : undefined;
  if (!p.keyResolved) return 'resolve_key';
  if (!p.numberClaimed) return 'claim_number';
  if (!p.allocated) return 'allocate';
  if (!p.running) return 'start';
  if (!p.healthy || p.status === 'provisioning') return 'await_health';
  if (p.wantsToken && !p.tokenSent) return 'send_token';
  if (p.wantsMail && !p.mailSent) return 'send_activation_mail';
  return undefined;
}
