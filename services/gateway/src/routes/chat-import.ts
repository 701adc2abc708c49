import multipart from '@fastify/multipart';
import { InboxErrorSchema } from '@switchboard/kit';
import {
  ChatImportContactSchema,
  ContactSchema,
  isTimeZone,
  ServiceError,
  WaIdSchema,
} from '@switchboard/proto';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { MediaSinkFor } from '../adapters/media-sink.ts';
import { GroupOut, UserOut } from '../domain/schemas.ts';
import { principalOf, security } from '../http/guards.ts';
import { type ExportUpload, IMPORT_WARNING_CODES, importExport } from '../use-cases/chat-import.ts';
import { createExpanders, MessageOut, type MessagingRouteOptions, tags } from './messaging-views.ts';

export interface ChatImportRouteOptions extends MessagingRouteOptions {
  /** Stores the imported files, each recorded as the importing user's. */
  media: MediaSinkFor;
  /** Largest request body, bytes. */
  maxBytes: number;
}

const ChatImportMediaFile = z
  .object({
    b64_content: z.string().describe('The file, base64.'),
    mime_type: z.string().min(3).max(200),
    file_name: z.string().min(1).max(500).describe('As the export names it (`IMG-20230305-WA0007.jpg`).'),
  })
  .meta({ id: 'ChatImportMediaFile' });

const ChatImportRequest = z
  .object({
    chat_text: z
      .string()
      .min(1)
      .describe('The text file the business app’s “Export chat” wrote (`_chat.txt`).'),
    chat_participants: z
      .array(ChatImportContactSchema)
      .default([])
      .describe(
        'Needed when the customer is in the exporting phone’s contacts (the export then writes a name, not a ' +
          'number): the customer’s handle and number; with two entries, one is the business’s own number. At most two.',
      ),
    utc_offset_minutes: z
      .number()
      .int()
      .min(-24 * 60)
      .max(24 * 60)
      .describe(
        'Minutes the exporting device’s zone is ahead of UTC (negative in the Americas). One offset for the whole ' +
          'chat: messages from the other side of a summer-time change are off by that hour; give `time_zone` to avoid it.',
      ),
    time_zone: z
      .string()
      .min(1)
      .max(100)
      .optional()
      .describe('IANA zone of the device (`Europe/Berlin`); when given it wins over `utc_offset_minutes`.'),
    device_language_code: z
      .string()
      .regex(/^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})*$/, 'a locale code such as de, pt-BR or en_GB')
      .describe(
        'The device’s language, with country when known; decides the day/month order only when nothing else does.',
      ),
    media_files: z.array(ChatImportMediaFile).default([]),
  })
  .meta({
    id: 'ChatImportRequest',
    example: {
      chat_text: '12/03/2024, 10:15 - +55 61 98121-3457: Hello, is the shop open today?\n',
      chat_participants: [],
      utc_offset_minutes: -180,
      device_language_code: 'pt-BR',
      media_files: [],
    },
  });

const ImportWarning = z
  .object({
    line: z.number().int().describe('Line of the message in `chat_text`; 0 for a media file no line names.'),
    file_name: z.string().nullable(),
    code: z.enum(IMPORT_WARNING_CODES),
    reason: z.string(),
  })
  .meta({ id: 'ChatImportWarning' });

const ChatImportOut = z
  .object({
    wa_id: WaIdSchema,
    contact: ContactSchema,
    new_messages: z
      .number()
      .int()
      .describe('Messages this import added (a re-import adds only what is new).'),
    last_message: MessageOut.nullable(),
    assigned_to_user: UserOut.nullable(),
    assigned_group: GroupOut.nullable(),
    tags: z.array(z.unknown()),
    warnings: z
      .array(ImportWarning)
      .describe('Media lines imported without their file, and files no line names. Not failures.'),
  })
  .meta({ id: 'ChatImport' });

/**
 * A multipart request's media files as the import takes them: they stay bytes (no base64 round
 * trip for files that can reach the request's limit), while the rest of the body is checked by
 * the route's schema like a JSON body.
 */
const multipartFiles = new WeakMap<FastifyRequest, ExportUpload['mediaFiles']>();

/**
 * Why reading a multipart body failed, as the client is told. Our own refusals and the parser's
 * (a file past the limit: 413, too many parts) carry their status and keep it. Anything else the
 * parser throws (no boundary, a body cut short, bytes that are not multipart) has no status and
 * would be a 500, yet it is the client's malformed body: a 400.
 */
function multipartRefusal(err: unknown): unknown {
  if (err instanceof ServiceError) return err;
  if (typeof err === 'object' && err !== null && 'statusCode' in err && typeof err.statusCode === 'number') {
    return err;
  }
  const reason = err instanceof Error ? err.message : String(err);
  return ServiceError.validation(
    { non_field_errors: [`The multipart body is malformed: ${reason.slice(0, 200)}`] },
    'The multipart body is malformed.',
  );
}

/**
 * A multipart request as the JSON body: the fields by name (`chat_participants` as JSON text;
 * `chat_text` as a field or as a file part), every other file part a media file (its bytes kept
 * in `multipartFiles`, an empty `b64_content` in the body). Reads at most `maxBytes` in all.
 */
async function multipartBody(req: FastifyRequest, maxBytes: number): Promise<Record<string, unknown>> {
  const body: Record<string, unknown> = {};
  const media: { b64_content: string; mime_type: string; file_name: string }[] = [];
  const files: ExportUpload['mediaFiles'] = [];
  let total = 0;
  const count = (n: number) => {
    total += n;
    if (total > maxBytes) throw new ServiceError('payload_too_large');
  };
  try {
    for await (const part of req.parts()) {
      if (part.type === 'file') {
        const bytes = await part.toBuffer();
        count(bytes.length);
        if (part.fieldname === 'chat_text') body.chat_text = bytes.toString('utf8');
        else {
          media.push({ b64_content: '', mime_type: part.mimetype, file_name: part.filename });
          files.push({ fileName: part.filename, mimeType: part.mimetype, content: { bytes } });
        }
        continue;
      }
      // Cut at `fieldSize` bytes, the parser only flags it: a cut chat_text would lose messages.
      if (part.valueTruncated) throw new ServiceError('payload_too_large');
      const value = String(part.value);
      count(Buffer.byteLength(value));
      if (part.fieldname === 'chat_participants') {
        try {
          body.chat_participants = JSON.parse(value);
        } catch {
          throw ServiceError.validation({ chat_participants: ['A JSON array of {handle, phone_number}.'] });
        }
      } else if (part.fieldname === 'utc_offset_minutes') {
        // Empty is missing (refused as such), not 0: `Number('')` would import in UTC.
        if (value.trim() !== '') body.utc_offset_minutes = Number(value);
      } else body[part.fieldname] = value;
    }
  } catch (err) {
    throw multipartRefusal(err);
  }
  body.media_files = media;
  multipartFiles.set(req, files);
  return body;
}

/** `chat_import/`: a chat exported from the business app becomes inbox history. Registered with `prefix: '/api/v1'`. */
export const chatImportRoutes: FastifyPluginAsync<ChatImportRouteOptions> = async (plugin, deps) => {
  const app = plugin.withTypeProvider<ZodTypeProvider>();
  const { expandChat } = createExpanders(deps);
  // In this plugin's scope only: multipart (the export's .txt and media as file parts) besides JSON.
  await app.register(multipart, {
    // `parts` bounds files and fields together (1,000 unless set): exports carry thousands of files.
    limits: {
      fileSize: deps.maxBytes,
      files: 100_000,
      fields: 20,
      parts: 100_000 + 20,
      fieldSize: deps.maxBytes,
    },
  });

  app.post(
    '/chat_import/',
    {
      onRequest: deps.guards.requireMessagingUser,
      preValidation: async (req) => {
        // Validated by the body schema next, like a JSON body.
        if (req.isMultipart()) Object.assign(req, { body: await multipartBody(req, deps.maxBytes) });
      },
      bodyLimit: deps.maxBytes,
      schema: {
        tags,
        security,
        summary: 'Import chat',
        description:
          'Reads the text of the business app’s “Export chat” (Android or iOS, any language and era) and stores its ' +
          'messages in the customer’s chat, in the export’s order, as network-shaped bodies marked `imported: true`. ' +
          'The customer is the participant who is not the business (from `chat_participants`, or the one sender ' +
          'written as a phone number). Importing the same export again, or a later one that overlaps it, adds only the ' +
          'new messages. Imported messages are not sent to webhooks and do not open or move the customer care window. ' +
          'Media lines are linked to `media_files` by file name (two files of one name: 400); each file is stored as an inbox media file ' +
          '(checked like an upload: its type against its bytes, the size limit of its kind) and becomes the ' +
          'message’s `media`; a file that is missing or refused is listed in `warnings` and its message imported ' +
          'with `media: null`. Admins and users who may write to the chat. ' +
          'Also accepted as multipart/form-data: the same fields (`chat_participants` as JSON text), `chat_text` ' +
          'as a field or a file part, and each media file as a file part named by its file name in the export.',
        body: ChatImportRequest,
        response: {
          200: ChatImportOut,
          400: InboxErrorSchema,
          403: InboxErrorSchema,
          413: InboxErrorSchema,
        },
      },
    },
    async (req) => {
      const body = req.body;
      if (body.chat_participants.length > 2) throw new ServiceError('too_many_chat_participants');
      if (body.time_zone !== undefined && !isTimeZone(body.time_zone)) {
        throw ServiceError.validation({ time_zone: ['Not an IANA time zone.'] });
      }
      const principal = principalOf(req);
      const imported = await importExport({ bus: deps.bus, media: deps.media(principal) }, principal, {
        chatText: body.chat_text,
        participants: body.chat_participants,
        utcOffsetMinutes: body.utc_offset_minutes,
        ...(body.time_zone !== undefined && { timeZone: body.time_zone }),
        deviceLanguage: body.device_language_code,
        // A multipart request's files are its parts' bytes, never the body's placeholder text.
        mediaFiles:
          multipartFiles.get(req) ??
          body.media_files.map((f) => ({
            fileName: f.file_name,
            mimeType: f.mime_type,
            content: { base64: f.b64_content },
          })),
      });
      const chat = await expandChat(imported.chat);
      return {
        wa_id: chat.wa_id,
        contact: chat.contact,
        new_messages: imported.newMessages,
        last_message: chat.last_message,
        assigned_to_user: chat.assigned_to_user,
        assigned_group: chat.assigned_group,
        tags: chat.tags,
        warnings: imported.warnings,
      };
    },
  );
};
