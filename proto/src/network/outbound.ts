import { z } from 'zod';
import { MessagingProductSchema, RecipientSchema } from './common.ts';

/** Media hosted elsewhere is fetched by the network from `link`; uploaded media is named by `id`. */
const HttpUrl = z.url({ protocol: /^https?$/ });

const MediaId = z.string().min(1).max(100);
const exactlyOneSource = (m: { id?: string | undefined; link?: string | undefined }): boolean =>
  (m.id === undefined) !== (m.link === undefined);
const exactlyOneSourceMessage = { message: 'Provide exactly one of id or link.' };

const Caption = z.string().min(1).max(1024);

export const OutboundTextSchema = z.strictObject({
  body: z.string().min(1).max(4096),
  preview_url: z.boolean().optional(),
});
export const OutboundImageSchema = z
  .strictObject({ id: MediaId.optional(), link: HttpUrl.optional(), caption: Caption.optional() })
  .refine(exactlyOneSource, exactlyOneSourceMessage);
export const OutboundAudioSchema = z
  .strictObject({ id: MediaId.optional(), link: HttpUrl.optional(), voice: z.boolean().optional() })
  .refine(exactlyOneSource, exactlyOneSourceMessage);
export const OutboundVideoSchema = z
  .strictObject({ id: MediaId.optional(), link: HttpUrl.optional(), caption: Caption.optional() })
  .refine(exactlyOneSource, exactlyOneSourceMessage);
export const OutboundDocumentSchema = z
  .strictObject({
    id: MediaId.optional(),
    link: HttpUrl.optional(),
    caption: Caption.optional(),
    filename: z.string().min(1).max(240).optional(),
  })
  .refine(exactlyOneSource, exactlyOneSourceMessage);
export const OutboundStickerSchema = z
  .strictObject({ id: MediaId.optional(), link: HttpUrl.optional() })
  .refine(exactlyOneSource, exactlyOneSourceMessage);
export type OutboundMedia = z.infer<typeof OutboundImageSchema>;

export const OutboundLocationSchema = z.strictObject({
  latitude: z.number().min(-90).max(90),
  longitude: z.number().min(-180).max(180),
  name: z.string().max(1000).optional(),
  address: z.string().max(1000).optional(),
});

const Typed = z.string().max(100).optional();
/** A contact card, as sent and as received. */
export const ContactCardSchema = z.strictObject({
  name: z.strictObject({
    formatted_name: z.string().min(1),
    first_name: z.string().optional(),
    last_name: z.string().optional(),
    middle_name: z.string().optional(),
    suffix: z.string().optional(),
    prefix: z.string().optional(),
  }),
  addresses: z
    .array(
      z.strictObject({
        street: z.string().optional(),
        city: z.string().optional(),
        state: z.string().optional(),
        zip: z.string().optional(),
        country: z.string().optional(),
        country_code: z.string().optional(),
        type: Typed,
      }),
    )
    .optional(),
  birthday: z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}$/, 'YYYY-MM-DD')
    .optional(),
  emails: z.array(z.strictObject({ email: z.string().optional(), type: Typed })).optional(),
  org: z
    .strictObject({
      company: z.string().optional(),
      department: z.string().optional(),
      title: z.string().optional(),
    })
    .optional(),
  phones: z
    .array(z.strictObject({ phone: z.string().optional(), type: Typed, wa_id: z.string().optional() }))
    .optional(),
  urls: z.array(z.strictObject({ url: z.string().optional(), type: Typed })).optional(),
});
export type ContactCard = z.infer<typeof ContactCardSchema>;

const InteractiveHeaderSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('text'), text: z.string().min(1).max(60) }),
  z.strictObject({ type: z.literal('image'), image: OutboundImageSchema }),
  z.strictObject({ type: z.literal('video'), video: OutboundVideoSchema }),
  z.strictObject({ type: z.literal('document'), document: OutboundDocumentSchema }),
]);
const InteractiveBody = z.strictObject({ text: z.string().min(1).max(1024) });
const InteractiveFooter = z.strictObject({ text: z.string().min(1).max(60) });

export const OutboundInteractiveSchema = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('button'),
    header: InteractiveHeaderSchema.optional(),
    body: InteractiveBody,
    footer: InteractiveFooter.optional(),
    action: z.strictObject({
      buttons: z
        .array(
          z.strictObject({
            type: z.literal('reply'),
            reply: z.strictObject({ id: z.string().min(1).max(256), title: z.string().min(1).max(20) }),
          }),
        )
        .min(1)
        .max(3),
    }),
  }),
  z.strictObject({
    type: z.literal('list'),
    header: z.strictObject({ type: z.literal('text'), text: z.string().min(1).max(60) }).optional(),
    body: InteractiveBody,
    footer: InteractiveFooter.optional(),
    action: z.strictObject({
      button: z.string().min(1).max(20),
      sections: z
        .array(
          z.strictObject({
            title: z.string().max(24).optional(),
            rows: z
              .array(
                z.strictObject({
                  id: z.string().min(1).max(200),
                  title: z.string().min(1).max(24),
                  description: z.string().max(72).optional(),
                }),
              )
              .min(1)
              .max(10),
          }),
        )
        .min(1)
        .max(10),
    }),
  }),
  z.strictObject({
    type: z.literal('cta_url'),
    header: InteractiveHeaderSchema.optional(),
    body: InteractiveBody,
    footer: InteractiveFooter.optional(),
    action: z.strictObject({
      name: z.literal('cta_url'),
      parameters: z.strictObject({ display_text: z.string().min(1).max(20), url: HttpUrl }),
    }),
  }),
  z.strictObject({
    type: z.literal('location_request_message'),
    body: InteractiveBody,
    action: z.strictObject({ name: z.literal('send_location') }),
  }),
]);
export type OutboundInteractive = z.infer<typeof OutboundInteractiveSchema>;

export const OutboundReactionSchema = z.strictObject({
  message_id: z.string().min(1),
  /** An empty string removes an earlier reaction. */
  emoji: z.string().max(16),
});

export const TemplateParameterSchema = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('text'),
    text: z.string().min(1).max(32768),
    parameter_name: z.string().optional(),
  }),
  z.strictObject({
    type: z.literal('currency'),
    currency: z.strictObject({
      fallback_value: z.string(),
      code: z.string().length(3),
      amount_1000: z.number().int(),
    }),
    parameter_name: z.string().optional(),
  }),
  z.strictObject({
    type: z.literal('date_time'),
    date_time: z.strictObject({ fallback_value: z.string() }),
    parameter_name: z.string().optional(),
  }),
  z.strictObject({ type: z.literal('image'), image: OutboundImageSchema }),
  z.strictObject({ type: z.literal('video'), video: OutboundVideoSchema }),
  z.strictObject({ type: z.literal('document'), document: OutboundDocumentSchema }),
  z.strictObject({ type: z.literal('location'), location: OutboundLocationSchema }),
  z.strictObject({ type: z.literal('payload'), payload: z.string().min(1) }),
]);
export type TemplateParameter = z.infer<typeof TemplateParameterSchema>;

export const TemplateComponentParametersSchema = z.strictObject({
  type: z.enum(['header', 'body', 'button']),
  sub_type: z.enum(['quick_reply', 'url', 'copy_code', 'flow']).optional(),
  index: z.union([z.number().int().min(0).max(9), z.string().regex(/^\d$/)]).optional(),
  parameters: z.array(TemplateParameterSchema).optional(),
});
export type TemplateComponentParameters = z.infer<typeof TemplateComponentParametersSchema>;

export const OutboundTemplateSchema = z.strictObject({
  name: z.string().min(1).max(512),
  language: z.strictObject({
    code: z.string().min(2).max(15),
    policy: z.literal('deterministic').optional(),
  }),
  components: z.array(TemplateComponentParametersSchema).optional(),
});
export type OutboundTemplate = z.infer<typeof OutboundTemplateSchema>;

const envelope = {
  messaging_product: MessagingProductSchema,
  recipient_type: z.literal('individual').optional(),
  to: RecipientSchema,
  /** Makes the message a reply to an earlier one. */
  context: z.strictObject({ message_id: z.string().min(1) }).optional(),
  /** Echoed in this message's status webhooks. */
  biz_opaque_callback_data: z.string().max(512).optional(),
};

/**
 * Every message type the Cloud API sends, each body under the field named as its type, beside
 * `envelope` (who it goes to and how): the network's `POST /messages` and the inbox's send
 * request differ only in their envelopes.
 */
export function outboundMessageSchema<E extends z.ZodRawShape>(envelope: E) {
  return z.discriminatedUnion('type', [
    z.strictObject({ ...envelope, type: z.literal('text'), text: OutboundTextSchema }),
    z.strictObject({ ...envelope, type: z.literal('image'), image: OutboundImageSchema }),
    z.strictObject({ ...envelope, type: z.literal('audio'), audio: OutboundAudioSchema }),
    z.strictObject({ ...envelope, type: z.literal('video'), video: OutboundVideoSchema }),
    z.strictObject({ ...envelope, type: z.literal('document'), document: OutboundDocumentSchema }),
    z.strictObject({ ...envelope, type: z.literal('sticker'), sticker: OutboundStickerSchema }),
    z.strictObject({ ...envelope, type: z.literal('location'), location: OutboundLocationSchema }),
    z.strictObject({ ...envelope, type: z.literal('contacts'), contacts: z.array(ContactCardSchema).min(1) }),
    z.strictObject({ ...envelope, type: z.literal('interactive'), interactive: OutboundInteractiveSchema }),
    z.strictObject({ ...envelope, type: z.literal('reaction'), reaction: OutboundReactionSchema }),
    z.strictObject({ ...envelope, type: z.literal('template'), template: OutboundTemplateSchema }),
  ]);
}

/** `POST /messages`: one message of any type the Cloud API sends. */
export const OutboundMessageSchema = outboundMessageSchema(envelope);
export type OutboundMessage = z.infer<typeof OutboundMessageSchema>;
export type OutboundMessageType = OutboundMessage['type'];
export const OUTBOUND_MESSAGE_TYPES: readonly OutboundMessageType[] = OutboundMessageSchema.options.map(
  (o) => o.shape.type.value,
);

/** What callers of the client write: `messaging_product` is filled in for them. */
export type OutboundMessageInput = OutboundMessage extends infer M
  ? M extends { messaging_product: unknown }
    ? Omit<M, 'messaging_product'> & { messaging_product?: 'whatsapp' }
    : never
  : never;

type MediaRef = { id?: string | undefined; link?: string | undefined };

/** Every media object the message carries, wherever the type nests it. */
export function outboundMediaRefs(message: OutboundMessage): MediaRef[] {
  switch (message.type) {
    case 'image':
      return [message.image];
    case 'audio':
      return [message.audio];
    case 'video':
      return [message.video];
    case 'document':
      return [message.document];
    case 'sticker':
      return [message.sticker];
    case 'interactive': {
      const header = 'header' in message.interactive ? message.interactive.header : undefined;
      if (header?.type === 'image') return [header.image];
      if (header?.type === 'video') return [header.video];
      if (header?.type === 'document') return [header.document];
      return [];
    }
    case 'template':
      return (message.template.components ?? []).flatMap((c) =>
        (c.parameters ?? []).flatMap((p) => {
          if (p.type === 'image') return [p.image];
          if (p.type === 'video') return [p.video];
          if (p.type === 'document') return [p.document];
          return [];
        }),
      );
    default:
      return [];
  }
}

/** Every link the network must fetch before it can deliver the message. */
export function outboundMediaLinks(message: OutboundMessage): string[] {
  return outboundMediaRefs(message).flatMap((m) => (m.link ? [m.link] : []));
}

/** Every uploaded media id the message refers to. */
export function outboundMediaIds(message: OutboundMessage): string[] {
  return outboundMediaRefs(message).flatMap((m) => (m.id ? [m.id] : []));
}

/** `POST /messages` success: the wamid the statuses will refer to. */
export const SendMessageResponseSchema = z.looseObject({
  messaging_product: MessagingProductSchema,
  contacts: z.array(z.looseObject({ input: z.string(), wa_id: z.string() })).min(1),
  messages: z
    .array(
      z.looseObject({
        id: z.string().min(1),
        /** Templates only: `accepted`, `held_for_quality_assessment` or `paused`. */
        message_status: z.string().optional(),
      }),
    )
    .min(1),
});
export type SendMessageResponse = z.infer<typeof SendMessageResponseSchema>;
