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
  name: 'waba.inbound',
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
    // A body that failed transiently waits for its retry with a delayed nak, which keeps a
    // server slot (max_ack_pending) but no handler: the server may hand out far more than the
    // handlers running at once, so thousands of bodies waiting for a retry never stall the
    // healthy ones. No attempt limit: chats decides every failure (retried, or a dead letter).
    maxAckPending: 4_096,
    // Bodies that arrive while a fold runs go into the next one: with 64 handlers chats persisted
    // 0.795-0.823 of what a fast gateway accepted (6,000 webhooks at concurrency 32), with 256
    // 0.93-0.96, at the same CPU per body. Meta's bodies are a few KB; at the gateway's 3 MB
    // limit 256 would hold up to 768 MB.
    concurrency: 256,
  }),
} as const;
