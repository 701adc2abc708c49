import { randomUUID } from 'node:crypto';
import { type ExportMessage, type ParseFailure, parseChatExport } from '@switchboard/chat-export';
import {
  type Bus,
  type ChatImportContact,
  type ChatImportSummary,
  type ChatRecord,
  type ImportedLine,
  importChat,
  type Principal,
  ServiceError,
} from '@switchboard/proto';
import type { MediaSink } from '../adapters/media-sink.ts';
import { isBase64 } from '../domain/base64.ts';
import { callService } from '../routes/bus-call.ts';

/**
 * Importing an exported chat, the gateway's half: read the export (the same parser everywhere),
 * link media lines to the uploaded files and store those through the media sink, number
 * repeated identical lines, and hand the messages to chats in parts that fit on the bus. chats
 * decides the customer, the times and the ids, and stores.
 */

export const IMPORT_WARNING_CODES = [
  'media_not_stored',
  'media_file_missing',
  'media_omitted_in_export',
  'media_file_unused',
] as const;

export interface ImportWarning {
  line: number;
  file_name: string | null;
  code: (typeof IMPORT_WARNING_CODES)[number];
  reason: string;
}

export interface ExportUpload {
  chatText: string;
  participants: ChatImportContact[];
  utcOffsetMinutes: number;
  timeZone?: string;
  deviceLanguage: string;
  mediaFiles: { fileName: string; mimeType: string; b64Content: string }[];
}

export interface ImportResult {
  chat: ChatRecord;
  newMessages: number;
  warnings: ImportWarning[];
}

/** Messages per part sent to chats, and the estimated bytes a part may reach (the bus takes 8 MB). */
const PART_MESSAGES = 10_000;
const PART_BYTES = 3 * 1024 * 1024;
const PARTS_IN_FLIGHT = 3;
const FIRST_PART_MESSAGES = 500;

export function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

export async function importExport(
  deps: { bus: Bus; media: MediaSink },
  principal: Principal,
  upload: ExportUpload,
): Promise<ImportResult> {
  const files = decodeMedia(upload.mediaFiles);
  const now = new Date();
  const parsed = parseChatExport(upload.chatText, {
    deviceLanguage: upload.deviceLanguage,
    now,
    // Older exports write no year: they are this year's, on the device's calendar.
    yearOfLastMessage: new Date(now.getTime() + upload.utcOffsetMinutes * 60_000).getUTCFullYear(),
  });
  if (!parsed.ok) throw failureOf(parsed);

  const conversation = parsed.messages.filter((m) => m.system === null && m.sender !== null);
  const { lines, warnings } = await linesOf(conversation, files, deps.media);
  const senders = new Map<string, string | null>();
  for (const l of lines) senders.set(l.sender, l.sender_number);

  const parts = partsOf(lines);
  const common = {
    principal,
    import_id: randomUUID(),
    parts: parts.length,
    chat_participants: upload.participants,
    senders: [...senders].map(([name, number]) => ({ name, number })),
    utc_offset_minutes: upload.utcOffsetMinutes,
    ...(upload.timeZone !== undefined && { time_zone: upload.timeZone }),
    device_language_code: upload.deviceLanguage,
  };
  const send = (part: number, extra: { summary?: ChatImportSummary } = {}) =>
    callService(
      deps.bus,
      importChat,
      { ...common, part, messages: parts[part] ?? [], ...extra },
      { timeoutMs: 60_000 },
    );
  // All parts but the last go a few at a time, each as soon as one in flight is answered (each
  // is one transaction in chats, and ids make their order irrelevant); the first, small, creates
  // the chat, and the parts sent beside it wait in PostgreSQL for that row only, with their
  // reading and checking done meanwhile. The last records the import.
  let newMessages = 0;
  const lastPart = parts.length - 1;
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < lastPart) {
      const answer = await send(next++);
      newMessages += answer.new_messages;
    }
  };
  await Promise.all(Array.from({ length: PARTS_IN_FLIGHT }, lane));
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
  return { chat: answer.chat, newMessages, warnings };
}

/** The parser's failures as the catalogue's errors. */
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

/** The uploaded files by name, decoded; base64 that does not decode is a 400 naming each file. */
function decodeMedia(files: ExportUpload['mediaFiles']): Map<string, { mimeType: string; bytes: Buffer }> {
  const byName = new Map<string, { mimeType: string; bytes: Buffer }>();
  const bad: Record<string, string[]> = {};
  files.forEach((f, i) => {
    const compact = f.b64Content.replace(/\s+/g, '');
    if (!isBase64(compact)) bad[`media_files.${i}.b64_content`] = ['Not valid base64.'];
    else byName.set(f.fileName, { mimeType: f.mimeType, bytes: Buffer.from(compact, 'base64') });
  });
  if (Object.keys(bad).length > 0) throw new ServiceError('invalid_base64', undefined, { fields: bad });
  return byName;
}

/** The order-independent key of a line: lines with the same key get ordinals 0, 1, 2, … in file order. */
const contentKey = (m: ExportMessage): string =>
  `${m.localTime}\u0000${m.sender}\u0000${m.media?.kind ?? ''}\u0000${m.media?.fileName ?? ''}\u0000${m.text}`;

/**
 * The messages as chats takes them: each media line linked to its uploaded file (stored through
 * the sink, when it can), repeats numbered; what could not be linked or stored is a warning.
 */
async function linesOf(
  conversation: readonly ExportMessage[],
  files: Map<string, { mimeType: string; bytes: Buffer }>,
  sink: MediaSink,
): Promise<{ lines: ImportedLine[]; warnings: ImportWarning[] }> {
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
        link = (await sink.store({ fileName, mimeType: file.mimeType, bytes: file.bytes }))?.link ?? null;
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
  return { lines, warnings };
}

/** Consecutive runs of lines that each fit on the bus; an export without messages is one empty part. */
function partsOf(lines: readonly ImportedLine[]): ImportedLine[][] {
  const parts: ImportedLine[][] = [];
  let current: ImportedLine[] = [];
  let bytes = 0;
  for (const l of lines) {
    const size = 3 * (l.text.length + l.sender.length + (l.media?.file_name?.length ?? 0)) + 300;
    // The first part is small: it creates the chat, which the others wait for.
    const limit = parts.length === 0 ? FIRST_PART_MESSAGES : PART_MESSAGES;
    if (current.length > 0 && (current.length >= limit || bytes + size > PART_BYTES)) {
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
