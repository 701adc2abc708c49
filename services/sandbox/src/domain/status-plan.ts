export interface StatusPlanInput {
  readonly delaysMs: { readonly sent: number; readonly delivered: number; readonly read: number };
  readonly readWithoutDeliveredRate: number;
  readonly duplicateStatusRate: number;
  readonly neverReads: boolean;
}

export interface PlannedStatus {
  readonly status: 'sent' | 'delivered' | 'read';
  /** From the moment the message is ready to go out. */
  readonly delayMs: number;
  readonly duplicate: boolean;
}

/**
 * The statuses a deliverable message produces: `sent`, then `delivered`, then `read`. Like the
 * real network, `delivered` is sometimes skipped when the customer reads at once, never-reading
 * customers stop at `delivered`, and a status is now and then posted twice.
 */
export function planStatuses(input: StatusPlanInput, random: () => number): PlannedStatus[] {
  const plan: PlannedStatus[] = [];
  let at = input.delaysMs.sent;
  plan.push({ status: 'sent', delayMs: at, duplicate: false });
  const readsAtOnce = !input.neverReads && random() < input.readWithoutDeliveredRate;
  at += input.delaysMs.delivered;
  if (!readsAtOnce) plan.push({ status: 'delivered', delayMs: at, duplicate: false });
  if (!input.neverReads) {
    at += input.delaysMs.read;
    plan.push({ status: 'read', delayMs: at, duplicate: false });
  }
  const duplicates = plan
    .filter(() => random() < input.duplicateStatusRate)
    .map((p) => ({ ...p, delayMs: p.delayMs + 1, duplicate: true }));
  return [...plan, ...duplicates];
}
