import { z } from 'zod';
import { CloudApiErrorBodySchema, ContactCardSchema, TemplateSchema, WaIdSchema } from '../../domain/wire.ts';

const Base64 = z.string().regex(/^[A-Za-z0-9+/=\s]+$/, 'base64');
const MediaBytes = {
  /** The file's MIME type; the sandbox's sample file type when absent. */
  mime_type: z.string().min(3).max(100).optional(),
  /** The file itself; a small sample file of the type when absent. */
  data_base64: Base64.optional(),
};

const Referral = z.strictObject({
  source_url: z.url().optional(),
  source_id: z.string().optional(),
  source_type: z.enum(['ad', 'post']).optional(),
  headline: z.string().optional(),
  body: z.string().optional(),
  media_type: z.enum(['image', 'video']).optional(),
  image_url: z.url().optional(),
  video_url: z.url().optional(),
  thumbnail_url: z.url().optional(),
  ctwa_clid: z.string().optional(),
});

const common = {
  /** The customer's WhatsApp profile name, kept for later messages. */
  profile_name: z.string().min(1).max(100).optional(),
  /** When the customer sent it, in POSIX seconds; earlier than now for a late delivery. */
  timestamp: z.union([z.number().int().min(0), z.string().regex(/^\d{1,12}$/)]).optional(),
  /** The customer came from a Click-to-WhatsApp ad (fields default to a sample ad). */
  referral: Referral.optional(),
  /** A reply to an earlier message (`id`), or a forwarded message. */
  context: z
    .strictObject({
      id: z.string().min(1).optional(),
      forwarded: z.boolean().optional(),
      frequently_forwarded: z.boolean().optional(),
    })
    .optional(),
};

/**
 * A message from a customer, shaped like the network's own `messages[]` entry: `type` plus an
 * object under the type's name. Every field of that object has a sample default.
 */
export const CustomerMessageRequestSchema = z.discriminatedUnion('type', [
  z.strictObject({
    ...common,
    type: z.literal('text'),
    text: z.strictObject({ body: z.string().min(1).max(4096) }).optional(),
  }),
  z.strictObject({
    ...common,
    type: z.literal('image'),
    image: z.strictObject({ ...MediaBytes, caption: z.string().max(1024).optional() }).optional(),
  }),
  z.strictObject({
    ...common,
    type: z.literal('audio'),
    audio: z.strictObject({ ...MediaBytes, voice: z.boolean().optional() }).optional(),
  }),
  z.strictObject({
    ...common,
    type: z.literal('video'),
    video: z.strictObject({ ...MediaBytes, caption: z.string().max(1024).optional() }).optional(),
  }),
  z.strictObject({
    ...common,
    type: z.literal('document'),
    document: z
      .strictObject({
        ...MediaBytes,
        caption: z.string().max(1024).optional(),
        filename: z.string().max(240).optional(),
      })
      .optional(),
  }),
  z.strictObject({
    ...common,
    type: z.literal('sticker'),
    sticker: z.strictObject({ ...MediaBytes, animated: z.boolean().optional() }).optional(),
  }),
  z.strictObject({
    ...common,
    type: z.literal('location'),
    location: z
      .strictObject({
        latitude: z.number().min(-90).max(90),
        longitude: z.number().min(-180).max(180),
        name: z.string().optional(),
        address: z.string().optional(),
      })
      .optional(),
  }),
  z.strictObject({
    ...common,
    type: z.literal('contacts'),
    contacts: z.array(ContactCardSchema).min(1).optional(),
  }),
  z.strictObject({
    ...common,
    type: z.literal('interactive'),
    /** `{"type":"list_reply"}` alone picks the sample row; the default is a button reply. */
    interactive: z
      .discriminatedUnion('type', [
        z.strictObject({
          type: z.literal('button_reply'),
          button_reply: z
            .strictObject({ id: z.string().min(1), title: z.string().min(1).max(20) })
            .optional(),
        }),
        z.strictObject({
          type: z.literal('list_reply'),
          list_reply: z
            .strictObject({
              id: z.string().min(1),
              title: z.string().min(1).max(24),
              description: z.string().max(72).optional(),
            })
            .optional(),
        }),
      ])
      .optional(),
  }),
  z.strictObject({
    ...common,
    type: z.literal('button'),
    button: z.strictObject({ text: z.string().min(1), payload: z.string().min(1) }).optional(),
  }),
  z.strictObject({
    ...common,
    type: z.literal('reaction'),
    /** `message_id` defaults to the business's latest message to this customer. */
    reaction: z
      .strictObject({ message_id: z.string().min(1).optional(), emoji: z.string().max(16) })
      .optional(),
  }),
  z.strictObject({
    ...common,
    type: z.literal('order'),
    order: z
      .strictObject({
        catalog_id: z.string().min(1),
        text: z.string().optional(),
        product_items: z
          .array(
            z.strictObject({
              product_retailer_id: z.string().min(1),
              quantity: z.number().int().positive(),
              item_price: z.number().nonnegative(),
              currency: z.string().length(3),
            }),
          )
          .min(1),
      })
      .optional(),
  }),
  z.strictObject({
    ...common,
    type: z.literal('system'),
    /** A number change: the customer's new wa_id. */
    system: z.strictObject({ new_wa_id: WaIdSchema.optional() }).optional(),
  }),
  z.strictObject({
    ...common,
    type: z.literal('unsupported'),
    /** What the customer sent that the Cloud API cannot pass on, e.g. `poll_creation`. */
    unsupported: z.strictObject({ type: z.string().min(1) }).optional(),
  }),
  z.strictObject({ ...common, type: z.literal('unknown') }),
]);
export type CustomerMessageRequest = z.infer<typeof CustomerMessageRequestSchema>;

export const CustomerMessageResponseSchema = z.object({
  id: z.string(),
  timestamp: z.string(),
  media_id: z.string().optional(),
  window_expires_at: z.number().int().nullable(),
  /** False when the business has blocked this customer: the network drops the message. */
  delivered_to_business: z.boolean(),
});
export type CustomerMessageResponse = z.infer<typeof CustomerMessageResponseSchema>;

export const WaIdParams = z.object({ wa_id: WaIdSchema });

export const CustomerSchema = z.object({
  wa_id: z.string(),
  profile_name: z.string(),
  undeliverable: z.boolean(),
  never_reads: z.boolean(),
  blocked: z.boolean().describe('The customer blocked the business: messages fail with 131026.'),
  blocked_by_business: z.boolean(),
  last_message_at: z.number().int().nullable(),
  window_expires_at: z.number().int().nullable(),
  window_open: z.boolean(),
});

export const CustomerPatchSchema = z.strictObject({
  profile_name: z.string().min(1).max(100).optional(),
  undeliverable: z.boolean().optional(),
  never_reads: z.boolean().optional(),
  blocked: z.boolean().optional(),
});

export const StatusEventSchema = z.object({
  status: z.string(),
  timestamp: z.number().int(),
  duplicate: z.boolean(),
  errors: z.array(z.looseObject({ code: z.number() })).optional(),
});

export const ReceivedMessageSchema = z.object({
  id: z.string(),
  type: z.string(),
  accepted_at: z.number().int(),
  message: z.record(z.string(), z.unknown()),
  status: z
    .string()
    .nullable()
    .describe('The furthest status reached: sent < delivered < read; failed wins.'),
  statuses: z.array(StatusEventSchema),
  links: z.array(z.looseObject({ link: z.string(), ok: z.boolean() })),
  media: z
    .array(z.object({ id: z.string(), mime_type: z.string(), size: z.number().int(), sha256: z.string() }))
    .describe('Files the message names by media id, as uploaded to the number.'),
});

export const ReceivedListSchema = z.object({ wa_id: z.string(), messages: z.array(ReceivedMessageSchema) });

const Behaviour = z.strictObject({
  status_delays_ms: z
    .strictObject({
      sent: z.number().int().min(0).optional(),
      delivered: z.number().int().min(0).optional(),
      read: z.number().int().min(0).optional(),
    })
    .optional(),
  read_without_delivered_rate: z.number().min(0).max(1).optional(),
  duplicate_status_rate: z.number().min(0).max(1).optional(),
  rate_limit_per_second: z.number().int().min(0).optional(),
  template_opens_window: z.boolean().optional(),
});

export const NumberCreateSchema = z.strictObject({
  display_phone_number: WaIdSchema.optional(),
  phone_number_id: WaIdSchema.optional(),
  waba_id: WaIdSchema.optional(),
  api_key: z.string().min(8).max(200).optional(),
  webhook_secret: z.string().min(8).max(200).optional(),
  webhook_url: z.url().optional(),
  behaviour: Behaviour.optional(),
  templates: z.array(TemplateSchema).optional(),
});

export const NumberPatchSchema = z.strictObject({
  behaviour: Behaviour.optional(),
  templates: z.array(TemplateSchema).optional(),
});

export const NumberSchema = z.object({
  phone_number_id: z.string(),
  display_phone_number: z.string(),
  waba_id: z.string(),
  api_key: z.string(),
  webhook_secret: z.string(),
  webhook_url: z.string().nullable(),
  clock_offset_seconds: z.number(),
  behaviour: z.object({
    status_delays_ms: z.object({ sent: z.number(), delivered: z.number(), read: z.number() }),
    read_without_delivered_rate: z.number(),
    duplicate_status_rate: z.number(),
    rate_limit_per_second: z.number(),
    template_opens_window: z.boolean(),
  }),
});

export const NumberIdParams = z.object({ phone_number_id: WaIdSchema });

export const ClockSchema = z.object({
  now: z.number().int().describe('The number’s current time, POSIX seconds'),
  offset_seconds: z.number().int(),
});
export const ClockSetSchema = z.strictObject({ offset_seconds: z.number().int() });

export const FaultRequestSchema = z.strictObject({
  /** How many of the next network calls fail. */
  count: z.number().int().min(1).max(1000),
  status: z.union([z.literal(429), z.literal(500), z.literal(502), z.literal(503)]),
  retry_after_seconds: z.number().int().min(0).max(3600).optional(),
  /** `media_download`: only downloads of media URLs fail (the calls before them pass). */
  only: z.enum(['media_download']).optional(),
});
export const FaultListSchema = z.object({
  faults: z.array(
    z.object({
      status: z.number(),
      remaining: z.number(),
      retry_after_seconds: z.number().nullable(),
      only: z.string().nullable(),
    }),
  ),
});

export const DeliverySchema = z.object({
  id: z.string(),
  kind: z.enum(['messages', 'statuses']),
  refs: z.array(z.string()),
  state: z.enum(['pending', 'delivered', 'gave_up']),
  created_at: z.number(),
  body: z.string(),
  attempts: z.array(
    z.object({
      at: z.number(),
      url: z.string().nullable(),
      status: z.number().nullable(),
      error: z.string().nullable(),
    }),
  ),
});
export const DeliveryListSchema = z.object({ deliveries: z.array(DeliverySchema) });
export const DeliveryQuerySchema = z.object({
  wamid: z.string().optional(),
  state: z.enum(['pending', 'delivered', 'gave_up']).optional(),
});

/** Per-number control calls name their number by its API key, or `?phone_number_id=`, else the seed number. */
export const NumberSelectorQuery = z.object({ phone_number_id: WaIdSchema.optional() });

/**
 * The options of a control call on one number (see `controlNumber`): it takes `?phone_number_id=`
 * and answers 400 or 401 when the number cannot be told, besides its own answers.
 */
export function numberControlRoute<S extends { response: Record<number, unknown> }>(schema: S) {
  return controlRoute({
    querystring: NumberSelectorQuery,
    ...schema,
    response: { ...schema.response, 400: CloudApiErrorBodySchema, 401: CloudApiErrorBodySchema },
  });
}

/** The options of a control call: its schema, filed under the control calls in the OpenAPI document. */
export function controlRoute<S extends object>(schema: S) {
  return { schema: { tags: ['sandbox control'], ...schema } };
}
