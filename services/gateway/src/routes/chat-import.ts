import { randomUUID } from 'node:crypto';
import multipart from '@fastify/multipart';
import { type ExportMessage, type ParseFailure, parseChatExport } from '@switchboard/chat-export';
import { InboxErrorSchema } from '@switchboard/kit';
import {
  ChatImportContactSchema,
  ContactSchema,
  type ImportedLine,
  type ChatImportSummary as ImportSummary,
  importChat,
  ServiceError,
  WaIdSchema,
} from '@switchboard/proto';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { MediaSink } from '../adapters/media-sink.ts';
import { isBase64 } from '../domain/base64.ts';
import { GroupOut, UserOut } from '../domain/schemas.ts';
import { principalOf } from '../http/guards.ts';
import { callService } from './bus-call.ts';
import {
  createExpanders,
  MessageOut,
  type MessagingRouteOptions,
  security,
  tags,
} from './messaging-views.ts';

export interface ChatImportRouteOptions extends MessagingRouteOptions {
  media: MediaSink;
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
    code: z.enum(['media_not_stored', 'media_file_missing', 'media_omitted_in_export', 'media_file_unused']),
    reason: z.string(),
  })
  .meta({ id: 'ChatImportWarning' });
type ImportWarning = z.infer<typeof ImportWarning>;

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

/** Messages per part sent to chats, and the estimated bytes a part may reach (the bus takes 8 MB). */
const PART_MESSAGES = 10_000;
const PART_BYTES = 3 * 1024 * 1024;
const PARTS_IN_FLIGHT = 3;

function failureOf(f: ParseFailure): ServiceError {
  switch (f.error) {
    case 'not_an_export':
      return new ServiceError('not_a_chat_export', `chat_text is not an exported chat: ${f.detail}`);
    case 'mixed_formats':
      return new ServiceError('mixed_chat_formats', f.detail, { details: { lines: f.lines } });
    case 'ambiguous_date_order':
      return new ServiceError('ambiguous_date_order', undefined, {
        details: { readings: f.readings.map((r) => ({ order: r.order, first_date: r.firstDate })) },
      });
  }
}

function decodeMedia(
  files: z.output<typeof ChatImportMediaFile>[],
): Map<string, { mimeType: string; bytes: Buffer }> {
  const byName = new Map<string, { mimeType: string; bytes: Buffer }>();
  const bad: Record<string, string[]> = {};
  files.forEach((f, i) => {
    const compact = f.b64_content.replace(/\s+/g, '');
    if (!isBase64(compact)) bad[`media_files.${i}.b64_content`] = ['Not valid base64.'];
    else byName.set(f.file_name, { mimeType: f.mime_type, bytes: Buffer.from(compact, 'base64') });
  });
  if (Object.keys(bad).length > 0) throw new ServiceError('invalid_base64', undefined, { fields: bad });
  return byName;
}

/** The order-independent key of a line: lines with the same key get ordinals 0, 1, 2, … in file order. */
const contentKey = (m: ExportMessage): string =>
  `${m.localTime}\u0000${m.sender}\u0000${m.media?.kind ?? ''}\u0000${m.media?.fileName ?? ''}\u0000${m.text}`;

/**
 * A multipart request as the JSON body: the fields by name (`chat_participants` as JSON text;
 * `chat_text` as a field or as a file part), every other file part a media file. Reads at most
 * `maxBytes` in all.
 */
async function multipartBody(req: FastifyRequest, maxBytes: number): Promise<Record<string, unknown>> {
  const body: Record<string, unknown> = {};
  const media: { b64_content: string; mime_type: string; file_name: string }[] = [];
  let total = 0;
  const count = (n: number) => {
    total += n;
    if (total > maxBytes) throw new ServiceError('payload_too_large');
  };
  for await (const part of req.parts()) {
    if (part.type === 'file') {
      const bytes = await part.toBuffer();
      count(bytes.length);
      if (part.fieldname === 'chat_text') body.chat_text = bytes.toString('utf8');
      else
        media.push({
          b64_content: bytes.toString('base64'),
          mime_type: part.mimetype,
          file_name: part.filename,
        });
      continue;
    }
    const value = String(part.value);
    count(value.length);
    if (part.fieldname === 'chat_participants') {
      try {
        body.chat_participants = JSON.parse(value);
      } catch {
        throw ServiceError.validation({ chat_participants: ['A JSON array of {handle, phone_number}.'] });
      }
    } else if (part.fieldname === 'utc_offset_minutes') body.utc_offset_minutes = Number(value);
    else body[part.fieldname] = value;
  }
  body.media_files = media;
  return body;
}

/** `chat_import/`: a chat exported from the business app becomes inbox history. Registered with `prefix: '/api/v1'`. */
export const chatImportRoutes: FastifyPluginAsync<ChatImportRouteOptions> = async (plugin, deps) => {
  const app = plugin.withTypeProvider<ZodTypeProvider>();
  const { expandChat } = createExpanders(deps);
  // In this plugin's scope only: multipart (the export's .txt and media as file parts) besides JSON.
  await app.register(multipart, {
    limits: { fileSize: deps.maxBytes, files: 100_000, fields: 20, fieldSize: deps.maxBytes },
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
          'Media lines are linked to `media_files` by file name. Admins and users who may write to the chat. ' +
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
      const files = decodeMedia(body.media_files);
      const now = new Date();
      const parsed = parseChatExport(body.chat_text, {
        deviceLanguage: body.device_language_code,
        now,
        yearOfLastMessage: new Date(now.getTime() + body.utc_offset_minutes * 60_000).getUTCFullYear(),
      });
      if (!parsed.ok) throw failureOf(parsed);

      const conversation = parsed.messages.filter((m) => m.system === null && m.sender !== null);
      const warnings: ImportWarning[] = [];
      const used = new Set<string>();
      const seen = new Map<string, number>();
      const lines: ImportedLine[] = [];
      for (const [position, m] of conversation.entries()) {
        const key = contentKey(m);
        const ordinal = seen.get(key) ?? 0;
        seen.set(key, ordinal + 1);
        let media: ImportedLine['media'] = null;
        if (m.media) {
          const fileName = m.media.fileName;
          const file = fileName === null ? undefined : files.get(fileName);
          let link: string | null = null;
          if (fileName === null) {
            warnings.push({
              line: m.line,
              file_name: null,
              code: 'media_omitted_in_export',
              reason: 'The export was made without media: imported without its file.',
            });
          } else if (!file) {
            warnings.push({
              line: m.line,
              file_name: fileName,
              code: 'media_file_missing',
              reason: 'No media_files entry has this file name: imported without its file.',
            });
          } else {
            used.add(fileName);
            link =
              (await deps.media.store({ fileName, mimeType: file.mimeType, bytes: file.bytes }))?.link ??
              null;
            if (link === null) {
              warnings.push({
                line: m.line,
                file_name: fileName,
                code: 'media_not_stored',
                reason: 'Media storage is not available: imported without its file.',
              });
            }
          }
          media = { kind: m.media.kind, file_name: fileName, mime_type: file?.mimeType ?? null, link };
        }
        lines.push({
          line: m.line,
          local_time: m.localTime,
          sender: m.sender ?? '',
          sender_number: m.senderNumber,
          text: m.text,
          edited: m.edited,
          media,
          ordinal,
          position,
        });
      }
      for (const name of files.keys()) {
        if (!used.has(name)) {
          warnings.push({
            line: 0,
            file_name: name,
            code: 'media_file_unused',
            reason: 'No line of the export names this file.',
          });
        }
      }
      const senders = new Map<string, string | null>();
      for (const l of lines) senders.set(l.sender, l.sender_number);

      const parts = partsOf(lines);
      const importId = randomUUID();
      let newMessages = 0;
      const common = {
        principal: principalOf(req),
        import_id: importId,
        parts: parts.length,
        chat_participants: body.chat_participants,
        senders: [...senders].map(([name, number]) => ({ name, number })),
        utc_offset_minutes: body.utc_offset_minutes,
        ...(body.time_zone !== undefined && { time_zone: body.time_zone }),
        device_language_code: body.device_language_code,
      };
      const send = (part: number, extra: { summary?: ImportSummary } = {}) =>
        callService(
          deps.bus,
          importChat,
          { ...common, part, messages: parts[part] ?? [], ...extra },
          { timeoutMs: 60_000 },
        );
      // The first part creates the chat; the parts between go a few at a time (each is one
      // transaction in chats, and ids make their order irrelevant); the last records the import.
      const lastPart = parts.length - 1;
      if (lastPart > 0) newMessages += (await send(0)).new_messages;
      const middle = Array.from({ length: Math.max(0, lastPart - 1) }, (_, i) => i + 1);
      for (let at = 0; at < middle.length; at += PARTS_IN_FLIGHT) {
        const answers = await Promise.all(middle.slice(at, at + PARTS_IN_FLIGHT).map((part) => send(part)));
        for (const a of answers) newMessages += a.new_messages;
      }
      const answer = await send(lastPart, {
        summary: {
          messages: lines.length,
          system_lines: parsed.messages.length - conversation.length,
          warnings: warnings.length,
          previous_new_messages: newMessages,
        },
      });
      newMessages += answer.new_messages;
      if (!answer.chat) throw new ServiceError('internal_error', 'The import answered no chat.');
      const chat = await expandChat(answer.chat);
      return {
        wa_id: chat.wa_id,
        contact: chat.contact,
        new_messages: newMessages,
        last_message: chat.last_message,
        assigned_to_user: chat.assigned_to_user,
        assigned_group: chat.assigned_group,
        tags: chat.tags,
        warnings,
      };
    },
  );
};

function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/** Consecutive runs of lines that each fit on the bus; an export without messages is one empty part. */
function partsOf(lines: readonly ImportedLine[]): ImportedLine[][] {
  const parts: ImportedLine[][] = [];
  let current: ImportedLine[] = [];
  let bytes = 0;
  for (const l of lines) {
    const size = 3 * (l.text.length + l.sender.length + (l.media?.file_name?.length ?? 0)) + 300;
    if (current.length > 0 && (current.length >= PART_MESSAGES || bytes + size > PART_BYTES)) {
      parts.push(current);
      current = [];
      bytes = 0;
    }
    current.push(l);
    bytes += size;
  }
  parts.push(current);
  return parts;
}
