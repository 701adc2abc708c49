import { z } from 'zod';
import { defineEvent } from './contracts.ts';
import { WaIdSchema } from './network/common.ts';
import { ChatAccessSubjectSchema } from './principal.ts';

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

export const networkEvent = defineEvent('network', NetworkEventSchema);
