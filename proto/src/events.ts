import { z } from 'zod';
import { defineEvent } from './contracts.ts';
import type { InstanceId } from './instance.ts';
import { WaIdSchema } from './network/common.ts';
import { ChatAccessSubjectSchema } from './principal.ts';
import { subjects } from './subjects.ts';

/**
 * One network event for the fan-out: a network webhook body that chats has stored, or a test
 * event. `body` is the network's JSON exactly as received, so per-user webhooks get the bytes
 * an integration written against the network itself expects.
 */
export const NetworkEventSchema = z.object({
  /** Stable id of the event; per-user deliveries derive their `webhook-id` from it. */
  event_id: z.string().min(1).max(200),
  /** `message` and/or `status`: what the body carries (a body may carry both). */
  kinds: z.array(z.enum(['message', 'status', 'test', 'other'])).min(1),
  /**
   * Customers the body concerns (from `contacts`, `messages[].from`, `statuses[].recipient_id`);
   * only valid wa_ids (chats leaves out what is not one).
   */
  wa_ids: z.array(WaIdSchema),
  /**
   * The chats the body concerns with their assignment when chats processed it: the fan-out
   * delivers to a user's webhook only what its owner may read (`canReadChat`). Missing on
   * events that concern no chat (tests, bodies that are not messages bodies).
   */
  chats: z.array(ChatAccessSubjectSchema).optional(),
  /** Epoch milliseconds when the gateway accepted the network webhook. */
  received_at: z.number().int().positive(),
  body: z.string().min(2),
});
export type NetworkEvent = z.infer<typeof NetworkEventSchema>;

/**
 * Network events travel on two subjects by what their body carries, so that consumers that act
 * only on customer messages (the push notifier, the media service's inbound durable) are not
 * handed the statuses, three for every message the business sends:
 *
 * - `sb.<i>.events.network`: the body carries at least one customer message (kind `message`).
 *   The subject all network events shared before the split: durables filtering on it keep
 *   their position and now see only messages.
 * - `sb.<i>.events.network_status`: everything else (statuses, test and other events).
 *
 * One stream keeps their order; the fan-out's durables filter `sb.<i>.events.*` and take both
 * (`networkEventsFilter`).
 */
export const networkMessageEvent = defineEvent('network', NetworkEventSchema);
export const networkStatusEvent = defineEvent('network_status', NetworkEventSchema);

/** The contract a network event is published on (see `networkMessageEvent`). */
export function networkEventContract(event: Pick<NetworkEvent, 'kinds'>) {
  return event.kinds.includes('message') ? networkMessageEvent : networkStatusEvent;
}

/** Whether a subject of the events stream is one of the two network event subjects. */
export function isNetworkEventSubject(instance: InstanceId, subject: string): boolean {
  return (
    subject === networkMessageEvent.subject(instance) || subject === networkStatusEvent.subject(instance)
  );
}

/**
 * The one filter (nats-server 2.9: one per consumer) that takes both network event subjects: every
 * event kind of the stream (`sb.<i>.events.<kind>`, one token), whose non-network events
 * (identity, webhook lifecycle: rare) the consumer acknowledges unread. A wildcard that is a
 * superset of the single subject used before the split, so widening a durable to it skips nothing.
 */
export const networkEventsFilter = (instance: InstanceId): string => subjects.events(instance, '*');
