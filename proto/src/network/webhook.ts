import { z } from 'zod';
import { MessagingProductSchema, NetworkErrorItemSchema, PosixSecondsStringSchema } from './common.ts';

// Inbound shapes are loose: the network adds fields over time, and the inbox must keep (and
// forward) what it does not know yet rather than reject the whole webhook.

const InboundMedia = {
  id: z.string().min(1),
  mime_type: z.string().min(1),
  sha256: z.string().min(1),
};

export const InboundImageSchema = z.looseObject({ ...InboundMedia, caption: z.string().optional() });
export const InboundVideoSchema = z.looseObject({ ...InboundMedia, caption: z.string().optional() });
export const InboundAudioSchema = z.looseObject({ ...InboundMedia, voice: z.boolean().optional() });
export const InboundDocumentSchema = z.looseObject({
  ...InboundMedia,
  caption: z.string().optional(),
  filename: z.string().optional(),
});
export const InboundStickerSchema = z.looseObject({ ...InboundMedia, animated: z.boolean().optional() });

export const InboundLocationSchema = z.looseObject({
  latitude: z.number(),
  longitude: z.number(),
  name: z.string().optional(),
  address: z.string().optional(),
});

export const InboundContactCardSchema = z.looseObject({
  name: z.looseObject({ formatted_name: z.string() }),
  addresses: z.array(z.looseObject({})).optional(),
  birthday: z.string().optional(),
  emails: z.array(z.looseObject({})).optional(),
  org: z.looseObject({}).optional(),
  phones: z.array(z.looseObject({ phone: z.string().optional(), wa_id: z.string().optional() })).optional(),
  urls: z.array(z.looseObject({})).optional(),
});

export const InboundInteractiveSchema = z.discriminatedUnion('type', [
  z.looseObject({
    type: z.literal('button_reply'),
    button_reply: z.looseObject({ id: z.string(), title: z.string() }),
  }),
  z.looseObject({
    type: z.literal('list_reply'),
    list_reply: z.looseObject({ id: z.string(), title: z.string(), description: z.string().optional() }),
  }),
  z.looseObject({
    type: z.literal('nfm_reply'),
    nfm_reply: z.looseObject({
      response_json: z.string(),
      body: z.string().optional(),
      name: z.string().optional(),
    }),
  }),
]);

/** A quick-reply button of a template. */
export const InboundButtonSchema = z.looseObject({ text: z.string(), payload: z.string() });

export const InboundReactionSchema = z.looseObject({
  message_id: z.string(),
  /** Absent when the customer removed the reaction. */
  emoji: z.string().optional(),
});

export const InboundOrderSchema = z.looseObject({
  catalog_id: z.string(),
  text: z.string().optional(),
  product_items: z.array(
    z.looseObject({
      product_retailer_id: z.string(),
      quantity: z.number(),
      item_price: z.number(),
      currency: z.string(),
    }),
  ),
});

export const InboundSystemSchema = z.looseObject({
  body: z.string(),
  /** The customer's new wa_id after a number change. */
  wa_id: z.string().optional(),
  type: z.string(),
});

/** Present on the first message after a customer tapped a Click-to-WhatsApp ad or post. */
export const ReferralSchema = z.looseObject({
  source_url: z.string(),
  source_id: z.string().optional(),
  source_type: z.string(),
  headline: z.string().optional(),
  body: z.string().optional(),
  media_type: z.string().optional(),
  image_url: z.string().optional(),
  video_url: z.string().optional(),
  thumbnail_url: z.string().optional(),
  ctwa_clid: z.string().optional(),
});
export type Referral = z.infer<typeof ReferralSchema>;

export const InboundContextSchema = z.looseObject({
  from: z.string().optional(),
  id: z.string().optional(),
  forwarded: z.boolean().optional(),
  frequently_forwarded: z.boolean().optional(),
  referred_product: z.looseObject({ catalog_id: z.string(), product_retailer_id: z.string() }).optional(),
});

const base = {
  from: z.string().min(1),
  id: z.string().min(1),
  timestamp: PosixSecondsStringSchema,
  context: InboundContextSchema.optional(),
  referral: ReferralSchema.optional(),
  errors: z.array(NetworkErrorItemSchema).optional(),
};

/** One message a customer sent, as the network posts it in `messages[]`. */
export const InboundMessageSchema = z.discriminatedUnion('type', [
  z.looseObject({ ...base, type: z.literal('text'), text: z.looseObject({ body: z.string() }) }),
  z.looseObject({ ...base, type: z.literal('image'), image: InboundImageSchema }),
  z.looseObject({ ...base, type: z.literal('audio'), audio: InboundAudioSchema }),
  z.looseObject({ ...base, type: z.literal('video'), video: InboundVideoSchema }),
  z.looseObject({ ...base, type: z.literal('document'), document: InboundDocumentSchema }),
  z.looseObject({ ...base, type: z.literal('sticker'), sticker: InboundStickerSchema }),
  z.looseObject({ ...base, type: z.literal('location'), location: InboundLocationSchema }),
  z.looseObject({ ...base, type: z.literal('contacts'), contacts: z.array(InboundContactCardSchema).min(1) }),
  z.looseObject({ ...base, type: z.literal('interactive'), interactive: InboundInteractiveSchema }),
  z.looseObject({ ...base, type: z.literal('button'), button: InboundButtonSchema }),
  z.looseObject({ ...base, type: z.literal('reaction'), reaction: InboundReactionSchema }),
  z.looseObject({ ...base, type: z.literal('order'), order: InboundOrderSchema }),
  z.looseObject({ ...base, type: z.literal('system'), system: InboundSystemSchema }),
  z.looseObject({
    ...base,
    type: z.literal('unsupported'),
    errors: z.array(NetworkErrorItemSchema).min(1),
    unsupported: z.looseObject({ type: z.string() }).optional(),
  }),
  /** The older name of `unsupported`, still seen on some numbers. */
  z.looseObject({ ...base, type: z.literal('unknown'), errors: z.array(NetworkErrorItemSchema).min(1) }),
]);
export type InboundMessage = z.infer<typeof InboundMessageSchema>;
export type InboundMessageType = InboundMessage['type'];
export const INBOUND_MESSAGE_TYPES: readonly InboundMessageType[] = InboundMessageSchema.options.map(
  (o) => o.shape.type.value,
);

export const MessageStatusValueSchema = z.enum([
  'sent',
  'delivered',
  'read',
  'failed',
  'deleted',
  'warning',
  'played',
]);
export type MessageStatusValue = z.infer<typeof MessageStatusValueSchema>;

/** One status update of a message the business sent, as posted in `statuses[]`. */
export const MessageStatusSchema = z.looseObject({
  id: z.string().min(1),
  status: MessageStatusValueSchema,
  timestamp: PosixSecondsStringSchema,
  recipient_id: z.string().min(1),
  biz_opaque_callback_data: z.string().optional(),
  conversation: z
    .looseObject({
      id: z.string(),
      expiration_timestamp: z.string().optional(),
      origin: z.looseObject({ type: z.string() }).optional(),
    })
    .optional(),
  pricing: z
    .looseObject({
      billable: z.boolean().optional(),
      pricing_model: z.string(),
      type: z.string().optional(),
      category: z.string(),
    })
    .optional(),
  errors: z.array(NetworkErrorItemSchema).optional(),
});
export type MessageStatus = z.infer<typeof MessageStatusSchema>;

export const WebhookContactSchema = z.looseObject({
  profile: z.looseObject({ name: z.string() }),
  wa_id: z.string(),
});

export const WebhookMetadataSchema = z.looseObject({
  display_phone_number: z.string(),
  phone_number_id: z.string(),
});

export const MessagesChangeValueSchema = z.looseObject({
  messaging_product: MessagingProductSchema,
  metadata: WebhookMetadataSchema,
  contacts: z.array(WebhookContactSchema).optional(),
  messages: z.array(InboundMessageSchema).optional(),
  statuses: z.array(MessageStatusSchema).optional(),
  errors: z.array(NetworkErrorItemSchema).optional(),
});
export type MessagesChangeValue = z.infer<typeof MessagesChangeValueSchema>;

/** The body of a `messages` webhook: customer messages and/or statuses of business messages. */
export const MessagesWebhookBodySchema = z.looseObject({
  object: z.literal('whatsapp_business_account'),
  entry: z
    .array(
      z.looseObject({
        /** The WhatsApp Business Account id. */
        id: z.string(),
        changes: z
          .array(z.looseObject({ field: z.literal('messages'), value: MessagesChangeValueSchema }))
          .min(1),
      }),
    )
    .min(1),
});
export type MessagesWebhookBody = z.infer<typeof MessagesWebhookBodySchema>;

export interface WebhookNumber {
  wabaId: string;
  displayPhoneNumber: string;
  phoneNumberId: string;
}

/**
 * A `messages` webhook body in the network's layout: one entry, one change, whatever
 * `contacts` / `messages` / `statuses` the value carries. The one place the envelope is built
 * (the sandbox's webhooks, the inbox's own failed statuses, fan-out test events, tests).
 */
export function messagesWebhookBody(
  number: WebhookNumber,
  value: Record<string, unknown>,
): MessagesWebhookBody {
  return {
    object: 'whatsapp_business_account',
    entry: [
      {
        id: number.wabaId,
        changes: [
          {
            value: {
              messaging_product: 'whatsapp',
              metadata: {
                display_phone_number: number.displayPhoneNumber,
                phone_number_id: number.phoneNumberId,
              },
              ...value,
            },
            field: 'messages',
          },
        ],
      },
    ],
  };
}
