import { z } from 'zod';
import { defineRpc, defineStream, type StreamContract } from './contracts.ts';
import { NetworkEventSchema } from './events.ts';
import type { InstanceId } from './instance.ts';
import { PrincipalSchema } from './principal.ts';
import { subjects } from './subjects.ts';

/**
 * Per-user webhooks: the management contracts the gateway calls on the fan-out service, the
 * lifecycle events fan-out publishes, and the per-webhook replay stream.
 */

export const WEBHOOK_URL_MAX_LENGTH = 2000;
export const WEBHOOK_MAX_STATIC_HEADERS = 20;

/**
 * Static headers may not override what the delivery itself defines (the Standard Webhooks
 * headers, content framing, the connection) or what would let a header smuggle a request.
 */
export const RESERVED_WEBHOOK_HEADERS: readonly string[] = [
  'webhook-id',
  'webhook-timestamp',
  'webhook-signature',
  'content-type',
  'content-length',
  'content-encoding',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'host',
  'te',
  'trailer',
  'upgrade',
  'expect',
  'traceparent',
  'tracestate',
];

const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$/;

export const WebhookHeadersSchema = z
  .record(
    z
      .string()
      .regex(HEADER_NAME, 'not a valid HTTP header name')
      .refine((n) => !RESERVED_WEBHOOK_HEADERS.includes(n.toLowerCase()), {
        message: 'this header is set by the delivery and cannot be overridden',
      }),
    z
      .string()
      .max(2000)
      // CR, LF and NUL would split the header block.
      .regex(/^[^\r\n\0]*$/, 'header values cannot contain line breaks'),
  )
  .refine((h) => Object.keys(h).length <= WEBHOOK_MAX_STATIC_HEADERS, {
    message: `at most ${WEBHOOK_MAX_STATIC_HEADERS} headers`,
  })
  .refine((h) => new Set(Object.keys(h).map((k) => k.toLowerCase())).size === Object.keys(h).length, {
    message: 'header names must be unique ignoring case',
  })
  .describe('Static headers sent with every delivery (for example an Authorization header of the receiver)');
export type WebhookHeaders = z.infer<typeof WebhookHeadersSchema>;

/**
 * A delivery target: http or https, no credentials in the URL (send them as a static header).
 * Whether the host may be private is decided by the fan-out service at connect time.
 */
export const WebhookUrlSchema = z
  .url({ protocol: /^https?$/, normalize: false })
  .max(WEBHOOK_URL_MAX_LENGTH)
  .refine(
    (u) => {
      const parsed = URL.parse(u);
      return parsed !== null && parsed.username === '' && parsed.password === '';
    },
    { message: 'credentials are not allowed in the URL; send them as a static header' },
  )
  .describe('http(s) URL that receives a JSON POST for every event');

/** `whsec_` followed by base64 of 24 to 64 random bytes (the Standard Webhooks secret format). */
export const WebhookSecretSchema = z
  .string()
  .regex(/^whsec_[A-Za-z0-9+/]{32,88}={0,2}$/, 'expected whsec_ followed by base64 of 24 to 64 bytes')
  .describe('Standard Webhooks signing secret');

export const WebhookDisabledReasonSchema = z
  .enum(['manual', 'gone', 'failing'])
  .describe('`manual`: disabled by a user; `gone`: the target answered 410; `failing`: failed continuously');

export const WebhookSchema = z.object({
  id: z.uuid(),
  url: z.string(),
  owner: z.number().int().positive().describe('User id of the webhook owner'),
  enabled: z.boolean(),
  ordered: z
    .boolean()
    .describe('true: one delivery at a time, in event order; false: up to 16 concurrent deliveries'),
  headers: z.record(z.string(), z.string()),
  disabled_reason: WebhookDisabledReasonSchema.nullable(),
  failing_since: z.iso.datetime({ offset: true }).nullable().describe('Start of the current failure streak'),
  previous_secret_expires_at: z.iso
    .datetime({ offset: true })
    .nullable()
    .describe('While set and in the future, deliveries carry signatures of both the old and new secret'),
  created_at: z.iso.datetime({ offset: true }),
  updated_at: z.iso.datetime({ offset: true }),
});
export type Webhook = z.infer<typeof WebhookSchema>;

/** Creation and rotation are the only answers that carry the secret. */
export const WebhookWithSecretSchema = WebhookSchema.extend({ secret: WebhookSecretSchema });
export type WebhookWithSecret = z.infer<typeof WebhookWithSecretSchema>;

export const DeliveryTriggerSchema = z.enum(['event', 'replay', 'test']);
export const DeliveryErrorClassSchema = z
  .enum(['http_status', 'timeout', 'connection', 'dns', 'tls', 'blocked_address', 'other'])
  .describe('Why the attempt failed, when it did');

export const DeliveryAttemptSchema = z.object({
  id: z.number().int(),
  event_id: z.string(),
  message_id: z.string().describe('The `webhook-id` header sent: the same on every retry of one event'),
  attempt: z.number().int().positive(),
  trigger: DeliveryTriggerSchema,
  url: z.string(),
  success: z.boolean(),
  status_code: z.number().int().nullable(),
  duration_ms: z.number().int().nonnegative(),
  error_class: DeliveryErrorClassSchema.nullable(),
  error: z.string().nullable(),
  response_excerpt: z.string().nullable().describe('First 4 KB of the response body'),
  next_attempt_at: z.iso.datetime({ offset: true }).nullable(),
  dead_lettered: z.boolean(),
  attempted_at: z.iso.datetime({ offset: true }),
});
export type DeliveryAttempt = z.infer<typeof DeliveryAttemptSchema>;

const Paging = z.object({
  limit: z.number().int().min(1).max(100),
  offset: z.number().int().min(0),
});

const WebhookRef = z.object({ principal: PrincipalSchema, id: z.string().min(1).max(100) });

export const CreateWebhookRequestSchema = z.object({
  principal: PrincipalSchema,
  url: WebhookUrlSchema,
  enabled: z.boolean().default(true),
  ordered: z.boolean().default(false),
  headers: WebhookHeadersSchema.default({}),
  /** Optional: bring your own secret; generated when absent. */
  secret: WebhookSecretSchema.optional(),
});

export const ListWebhooksRequestSchema = Paging.extend({
  principal: PrincipalSchema,
  /** Admins may narrow the list to one owner; users always see only their own. */
  owner: z.number().int().positive().optional(),
});

export const UpdateWebhookRequestSchema = WebhookRef.extend({
  url: WebhookUrlSchema.optional(),
  enabled: z.boolean().optional(),
  ordered: z.boolean().optional(),
  headers: WebhookHeadersSchema.optional(),
});

export const DeliveriesRequestSchema = WebhookRef.extend(Paging.shape);

export const ReplayRequestSchema = WebhookRef.extend({
  /** Epoch milliseconds: events dead-lettered at or after this instant are sent again. */
  since_ms: z.number().int().nonnegative(),
});

export const WebhookPageSchema = z.object({ count: z.number().int(), results: z.array(WebhookSchema) });
export const DeliveryPageSchema = z.object({
  count: z.number().int(),
  results: z.array(DeliveryAttemptSchema),
});

export const TestOutcomeSchema = z.object({
  success: z.boolean(),
  status_code: z.number().int().nullable(),
  duration_ms: z.number().int().nonnegative(),
  error_class: DeliveryErrorClassSchema.nullable(),
  error: z.string().nullable(),
  response_excerpt: z.string().nullable(),
  message_id: z.string(),
  event_id: z.string(),
});
export type TestOutcome = z.infer<typeof TestOutcomeSchema>;

export const ReplayResultSchema = z.object({
  replayed: z.number().int().nonnegative().describe('Dead-lettered events queued for delivery again'),
});

const rpc = (op: string) => (i: InstanceId) => subjects.rpc(i, 'fanout', op);

export const fanoutRpc = {
  create: defineRpc({
    name: 'fanout.webhooks.create',
    subject: rpc('webhooks.create'),
    request: CreateWebhookRequestSchema,
    response: WebhookWithSecretSchema,
  }),
  list: defineRpc({
    name: 'fanout.webhooks.list',
    subject: rpc('webhooks.list'),
    request: ListWebhooksRequestSchema,
    response: WebhookPageSchema,
  }),
  get: defineRpc({
    name: 'fanout.webhooks.get',
    subject: rpc('webhooks.get'),
    request: WebhookRef,
    response: WebhookSchema,
  }),
  update: defineRpc({
    name: 'fanout.webhooks.update',
    subject: rpc('webhooks.update'),
    request: UpdateWebhookRequestSchema,
    response: WebhookSchema,
  }),
  delete: defineRpc({
    name: 'fanout.webhooks.delete',
    subject: rpc('webhooks.delete'),
    request: WebhookRef,
    response: z.object({ deleted: z.literal(true) }),
  }),
  rotateSecret: defineRpc({
    name: 'fanout.webhooks.rotate_secret',
    subject: rpc('webhooks.rotate_secret'),
    request: WebhookRef,
    response: WebhookWithSecretSchema,
  }),
  test: defineRpc({
    name: 'fanout.webhooks.test',
    subject: rpc('webhooks.test'),
    request: WebhookRef,
    response: TestOutcomeSchema,
  }),
  deliveries: defineRpc({
    name: 'fanout.webhooks.deliveries',
    subject: rpc('webhooks.deliveries'),
    request: DeliveriesRequestSchema,
    response: DeliveryPageSchema,
  }),
  replay: defineRpc({
    name: 'fanout.webhooks.replay',
    subject: rpc('webhooks.replay'),
    request: ReplayRequestSchema,
    response: ReplayResultSchema,
  }),
} as const;

/** The test request waits for one real HTTP attempt: give it more than the attempt timeout. */
export const WEBHOOK_TEST_RPC_TIMEOUT_MS = 40_000;

/**
 * Something happened to a webhook. Workers subscribe to reconcile their consumers at once;
 * the event-log owner can consume it from the events stream (automatic disables must be
 * visible to admins).
 */
export const WebhookLifecycleEventSchema = z.object({
  webhook_id: z.uuid(),
  owner: z.number().int().positive(),
  action: z.enum(['created', 'updated', 'deleted', 'enabled', 'disabled', 'secret_rotated', 'replayed']),
  reason: WebhookDisabledReasonSchema.nullable(),
  /** Null when the fan-out itself acted (410, failing too long). */
  actor_user_id: z.number().int().positive().nullable(),
  url: z.string(),
  at: z.number().int().positive(),
});
export type WebhookLifecycleEvent = z.infer<typeof WebhookLifecycleEventSchema>;

export const webhookLifecycle = defineStream({
  name: 'events.webhooks',
  stream: 'events',
  subject: (i) => subjects.events(i, 'webhooks'),
  schema: WebhookLifecycleEventSchema,
});

/** A dead-lettered event queued again for exactly one webhook. */
export const WebhookReplaySchema = NetworkEventSchema.extend({
  webhook_id: z.uuid(),
  dead_letter_id: z.number().int().positive(),
});
export type WebhookReplay = z.infer<typeof WebhookReplaySchema>;

/**
 * Replays go to a subject of their own per webhook, read by that webhook's replay durable
 * only: a replayed event must not reach the other webhooks, and a consumer has one filter.
 */
export function webhookReplayStream(webhookId: string): StreamContract<typeof WebhookReplaySchema> {
  return defineStream({
    name: 'events.webhook_replay',
    stream: 'events',
    subject: (i) => subjects.events(i, `replay.${webhookId}`),
    schema: WebhookReplaySchema,
  });
}
