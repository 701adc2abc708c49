import { z } from 'zod';
import { defineConsumer, defineStream } from './contracts.ts';
import { subjects } from './subjects.ts';

/**
 * A network webhook body exactly as the network posted it. The body stays a string so the
 * bytes delivered to per-user webhooks are the bytes the network sent.
 */
export const WabaWebhookReceivedSchema = z.object({
  received_at: z.number().int().positive().describe('Epoch milliseconds when the gateway accepted the body'),
  body: z
    .string()
    .min(2)
    .max(3 * 1024 * 1024),
  signature_verified: z.boolean(),
});
export type WabaWebhookReceived = z.infer<typeof WabaWebhookReceivedSchema>;

export const wabaWebhookReceived = defineStream({
  name: 'waba.webhook.received',
  stream: 'inbound',
  subject: subjects.wabaInbound,
  schema: WabaWebhookReceivedSchema,
});

export const consumers = {
  chatsInbound: defineConsumer({
    durable: 'chats-inbound',
    message: wabaWebhookReceived,
    // Storing one body takes milliseconds; a short ack wait brings a crashed worker's
    // in-flight bodies back quickly.
    ackWaitSeconds: 10,
    maxAckPending: 64,
    maxDeliver: 20,
  }),
} as const;
