import { z } from 'zod';
import { defineEvent, defineStream, type StreamContract, serviceRpcs } from './contracts.ts';
import { NetworkEventSchema } from './events.ts';
import { PrincipalSchema } from './principal.ts';
import { foundPage } from './requests.ts';
import { subjects } from './subjects.ts';
import { posixSecondsSchema } from './time.ts';

/**
 * Per-user webhooks: the management contracts the gateway calls on the fan-out service, the
 * lifecycle events fan-out publishes, and the per-webhook replay stream.
 */

export const WEBHOOK_URL_MAX_LENGTH = 2000;
export const WEBHOOK_MAX_STATIC_HEADERS = 20;
export const WEBHOOK_HEADER_NAME_MAX_LENGTH = 100;
export const WEBHOOK_HEADER_VALUE_MAX_LENGTH = 2000;
/** Names and values together: receivers commonly refuse header blocks above 8 to 16 KB. */
export const WEBHOOK_HEADERS_MAX_TOTAL_LENGTH = 8192;

/**
 * Static headers may not override what the delivery itself defines (the Standard Webhooks
 * headers, content framing, the connection), hop-by-hop headers, or what would let a header
 * smuggle a request.
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
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'host',
  'te',
  'trailer',
  'upgrade',
  'http2-settings',
  'expect',
  'traceparent',
  'tracestate',
];

// RFC 9110 5.6.2: a header name is a token, one or more tchar.
const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/;

/**
 * Why a static header value could never be sent, if so. Values are held to visible ASCII with
 * spaces and tabs between (RFC 9110 5.5 without obs-text): anything else is refused by the HTTP
 * client or mangled on the way, and then every delivery would fail.
 */
export function headerValueProblem(value: string): string | undefined {
  const has = (test: (code: number) => boolean) => {
    for (let i = 0; i < value.length; i++) if (test(value.charCodeAt(i))) return true;
    return false;
  };
  if (has((c) => c === 0x0a || c === 0x0d)) return 'header values cannot contain line breaks';
  // UTF-16 code units: emoji, bidi controls such as U+202E and lone surrogates all land here.
  if (has((c) => c > 0x7f)) {
    return 'header values must be ASCII; encode other text (for example percent-encoding or base64)';
  }
  if (has((c) => (c < 0x20 && c !== 0x09) || c === 0x7f)) {
    return 'header values cannot contain control characters';
  }
  if (/^[ \t]|[ \t]$/.test(value)) return 'header values cannot start or end with spaces or tabs';
  return undefined;
}

/** Why a name cannot be a static header, if so (also of the partner events' headers). */
export function headerNameProblem(name: string): string | undefined {
  if (name.length > WEBHOOK_HEADER_NAME_MAX_LENGTH) {
    return `header names have at most ${WEBHOOK_HEADER_NAME_MAX_LENGTH} characters`;
  }
  if (!HEADER_NAME.test(name)) {
    return "not a valid HTTP header name: letters, digits and !#$%&'*+-.^_`|~ only";
  }
  if (RESERVED_WEBHOOK_HEADERS.includes(name.toLowerCase())) {
    return 'this header is set by the delivery or the connection and cannot be given';
  }
  return undefined;
}

const WebhookHeaderValueSchema = z
  .string()
  .max(WEBHOOK_HEADER_VALUE_MAX_LENGTH)
  .superRefine((v, ctx) => {
    const problem = headerValueProblem(v);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

export const WebhookHeadersSchema = z
  .record(z.string(), WebhookHeaderValueSchema)
  // Names are checked here rather than by a key schema, whose failures zod reports without the reason.
  .superRefine((h, ctx) => {
    const names = Object.keys(h);
    for (const name of names) {
      const problem = headerNameProblem(name);
      if (problem) ctx.addIssue({ code: 'custom', path: [name], message: problem });
    }
    if (names.length > WEBHOOK_MAX_STATIC_HEADERS) {
      ctx.addIssue({ code: 'custom', message: `at most ${WEBHOOK_MAX_STATIC_HEADERS} headers` });
    }
    if (new Set(names.map((k) => k.toLowerCase())).size !== names.length) {
      ctx.addIssue({ code: 'custom', message: 'header names must be unique ignoring case' });
    }
    const total = Object.entries(h).reduce((n, [k, v]) => n + k.length + v.length, 0);
    if (total > WEBHOOK_HEADERS_MAX_TOTAL_LENGTH) {
      ctx.addIssue({
        code: 'custom',
        message: `names and values together may not exceed ${WEBHOOK_HEADERS_MAX_TOTAL_LENGTH} characters`,
      });
    }
  })
  .describe(
    'Static headers sent with every delivery (for example an Authorization header of the receiver): ' +
      'names are HTTP tokens, values visible ASCII with inner spaces or tabs',
  );
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
  failing_since: posixSecondsSchema(
    'start of the current failure streak; null while deliveries succeed.',
  ).nullable(),
  previous_secret_expires_at: posixSecondsSchema(
    'while set (and in the future), deliveries carry signatures of both the old and the new secret.',
  ).nullable(),
  created_at: posixSecondsSchema(),
  updated_at: posixSecondsSchema(),
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
  next_attempt_at: posixSecondsSchema('when the event is tried again; null when it is not.').nullable(),
  dead_lettered: z.boolean(),
  attempted_at: posixSecondsSchema('when the attempt started.'),
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

export const WebhookPageSchema = foundPage(WebhookSchema);
export const DeliveryPageSchema = foundPage(DeliveryAttemptSchema);

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

const webhookRpc = serviceRpcs('fanout');

export const fanoutRpc = {
  create: webhookRpc('webhooks.create', {
    request: CreateWebhookRequestSchema,
    response: WebhookWithSecretSchema,
  }),
  list: webhookRpc('webhooks.list', {
    request: ListWebhooksRequestSchema,
    response: WebhookPageSchema,
  }),
  get: webhookRpc('webhooks.get', {
    request: WebhookRef,
    response: WebhookSchema,
  }),
  update: webhookRpc('webhooks.update', {
    request: UpdateWebhookRequestSchema,
    response: WebhookSchema,
  }),
  delete: webhookRpc('webhooks.delete', {
    request: WebhookRef,
    response: z.object({ deleted: z.literal(true) }),
  }),
  rotateSecret: webhookRpc('webhooks.rotate_secret', {
    request: WebhookRef,
    response: WebhookWithSecretSchema,
  }),
  test: webhookRpc('webhooks.test', {
    request: WebhookRef,
    response: TestOutcomeSchema,
  }),
  deliveries: webhookRpc('webhooks.deliveries', {
    request: DeliveriesRequestSchema,
    response: DeliveryPageSchema,
  }),
  replay: webhookRpc('webhooks.replay', {
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
  /** Epoch milliseconds (a bus payload, never an API answer). */
  at: z.number().int().positive(),
});
export type WebhookLifecycleEvent = z.infer<typeof WebhookLifecycleEventSchema>;

export const webhookLifecycle = defineEvent('webhooks', WebhookLifecycleEventSchema);

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
