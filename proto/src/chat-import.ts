import { z } from 'zod';
import { MediaFileSchema } from './media.ts';
import { ChatRecordSchema } from './messaging.ts';
import { WaIdSchema } from './network/common.ts';
import { PrincipalSchema } from './principal.ts';
import { chatsRpc } from './requests.ts';

// ---- chat import: the gateway reads the export, chats stores its messages ----

/** Spec 2.1 ChatImportContact: a name as the export writes it, and that person's number. */
export const ChatImportContactSchema = z
  .object({
    handle: z.string().trim().min(1).max(200).describe('The name the export writes for this person.'),
    phone_number: z
      .string()
      .trim()
      .regex(/^\+?[\d\s().-]{5,30}$/, 'a phone number in international format')
      .describe('International format; spaces, dashes and a leading + are ignored.'),
  })
  .meta({ id: 'ChatImportContact' });
export type ChatImportContact = z.infer<typeof ChatImportContactSchema>;

export const ImportMediaKindSchema = z.enum([
  'image',
  'video',
  'audio',
  'sticker',
  'gif',
  'document',
  'contact',
  'unknown',
]);
export type ImportMediaKind = z.infer<typeof ImportMediaKindSchema>;

/** The message type an imported file becomes: gifs play as video, shared contacts are kept as documents. */
export const MESSAGE_TYPE_OF_IMPORT_KIND = {
  image: 'image',
  video: 'video',
  gif: 'video',
  audio: 'audio',
  sticker: 'sticker',
  document: 'document',
  contact: 'document',
  unknown: 'unsupported',
} as const satisfies Record<ImportMediaKind, string>;

/** One conversation message of an export, as the gateway read it (system lines are not sent). */
export const ImportedLineSchema = z.object({
  /** 1-based line of its header in the export. */
  line: z.number().int().positive(),
  /** The exporting device's wall-clock time, `YYYY-MM-DDTHH:MM:SS`. */
  local_time: z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/),
  sender: z.string(),
  sender_number: z.string().nullable(),
  text: z.string(),
  /** The app marked it as edited. */
  edited: z.boolean(),
  media: z
    .object({
      kind: ImportMediaKindSchema,
      file_name: z.string().nullable(),
      mime_type: z.string().nullable(),
      /** Where the stored file is, when it could be stored; null otherwise (see the warnings). */
      link: z.string().nullable(),
      /** The file as the media service stored it (the Message's `media`); null or absent when not stored. */
      stored: MediaFileSchema.nullable().optional(),
    })
    .nullable(),
  /** How many earlier lines of this export have the same time, sender and content: keeps ids of repeats apart. */
  ordinal: z.number().int().min(0),
  /** Position in the whole export (0-based): messages of one second keep the file's order. */
  position: z.number().int().min(0),
});
export type ImportedLine = z.infer<typeof ImportedLineSchema>;

export const ImportSenderSchema = z.object({ name: z.string(), number: z.string().nullable() });

/** Totals of a whole export, sent with its last part for the event log. */
export const ChatImportSummarySchema = z.object({
  messages: z.number().int().min(0),
  system_lines: z.number().int().min(0),
  warnings: z.number().int().min(0),
  /** New messages the earlier parts stored. */
  previous_new_messages: z.number().int().min(0),
});
export type ChatImportSummary = z.infer<typeof ChatImportSummarySchema>;

export const importChat = chatsRpc('import_chat', {
  request: z.object({
    principal: PrincipalSchema,
    /** One import sent in parts (a part stays well under the bus's payload limit). */
    import_id: z.uuid(),
    /**
     * Epoch ms every part's messages take their creation time from (plus their position in the
     * export), so messages of one second keep the export's order across parts, whatever order
     * the parts arrive in.
     */
    created_base_ms: z.number().int().nonnegative(),
    part: z.number().int().min(0),
    parts: z.number().int().positive(),
    chat_participants: z.array(ChatImportContactSchema).max(2),
    /** Every sender of the whole export: the customer is decided from all of them, the same in every part. */
    senders: z.array(ImportSenderSchema),
    utc_offset_minutes: z
      .number()
      .int()
      .min(-24 * 60)
      .max(24 * 60),
    time_zone: z.string().optional(),
    device_language_code: z.string(),
    messages: z.array(ImportedLineSchema),
    /** Totals of the whole export, for the event log (sent with the last part). */
    summary: ChatImportSummarySchema.optional(),
  }),
  response: z.object({
    wa_id: WaIdSchema,
    /** Messages of this part that were not stored before. */
    new_messages: z.number().int().min(0),
    /** The chat after the last part; null for the other parts. */
    chat: ChatRecordSchema.nullable(),
  }),
});
