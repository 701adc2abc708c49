import { randomUUID } from 'node:crypto';
import { type ExportMessage, type ParseFailure, parseChatExport } from '@switchboard/chat-export';
import {
  type ChatImportContact,
  type ChatImportSummary,
  type ChatRecord,
  type ImportedLine,
  importChat,
  type MediaFile,
  type Principal,
  ServiceError,
} from '@switchboard/proto';
import type { Bus } from '@switchboard/proto/bus';
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
  /** Each file's bytes as received: base64 text in a JSON body, the bytes themselves from a multipart part. */
  mediaFiles: { fileName: string; mimeType: string; content: { base64: string } | { bytes: Buffer } }[];
}

export interface ImportResult {
  chat: ChatRecord;
  newMessages: number;
  warnings: ImportWarning[];
}

/** Messages per part sent to chats, and the estimated bytes a part may reach (the bus takes 8 MB). */
const PART_MESSAGES = 10_000;
/** WhatsApp's own limit for one text message. */
const MAX_MESSAGE_CHARS = 65_536;
const PART_BYTES = 3 * 1024 * 1024;
const PARTS_IN_FLIGHT = 3;
const FIRST_PART_MESSAGES = 500;

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
  // Longer than the app lets anyone write: not a message, and one part could not carry it.
  const overlong = conversation.filter((m) => m.text.length > MAX_MESSAGE_CHARS).map((m) => m.line);
  if (overlong.length) {
    throw ServiceError.validation(
      {
        chat_text: [
          `Messages longer than ${MAX_MESSAGE_CHARS} characters (more than WhatsApp allows) at line(s) ${overlong.slice(0, 10).join(', ')}.`,
        ],
      },
      'The export holds a message no chat can.',
    );
  }
  const senders = new Map<string, string | null>();
  for (const m of conversation) senders.set(m.sender ?? '', m.senderNumber);

  const parts = partsOf(conversation);
  // Lines are made part by part, in order (repeats are numbered in file order), so the first
  // part goes out before the rest of the export is read.
  const reader = createLineReader(files, deps.media);
  let reading: Promise<unknown> = Promise.resolve();
  const linesOfPart = (part: number): Promise<ImportedLine[]> => {
    const [from, to] = parts[part] ?? [0, 0];
    const lines = reading.then(() => reader.read(conversation.slice(from, to), from));
    reading = lines;
    return lines;
  };
  const common = {
    principal,
    import_id: randomUUID(),
    created_base_ms: Date.now() - 1_000_000,
    parts: parts.length,
    chat_participants: upload.participants,
    senders: [...senders].map(([name, number]) => ({ name, number })),
    utc_offset_minutes: upload.utcOffsetMinutes,
    ...(upload.timeZone !== undefined && { time_zone: upload.timeZone }),
    device_language_code: upload.deviceLanguage,
  };
  const send = (part: number, messages: ImportedLine[], extra: { summary?: ChatImportSummary } = {}) =>
    callService(deps.bus, importChat, { ...common, part, messages, ...extra }, { timeoutMs: 60_000 });
  // All parts but the last go a few at a time, each as soon as one in flight is answered (each
  // is one transaction in chats, and ids make their order irrelevant); the first, small, creates
  // the chat, and the parts sent beside it wait in PostgreSQL for that row only, with their
  // reading and checking done meanwhile. The last records the import.
  let newMessages = 0;
  const lastPart = parts.length - 1;
  let next = 0;
  // Once one part failed the import is answered with that failure: the other lanes stop
  // instead of storing more files and parts nobody will be told about.
  let failed = false;
  const lane = async (): Promise<void> => {
    while (!failed && next < lastPart) {
      const part = next++;
      try {
        const answer = await send(part, await linesOfPart(part));
        newMessages += answer.new_messages;
      } catch (err) {
        failed = true;
        throw err;
      }
    }
  };
  await Promise.all(Array.from({ length: PARTS_IN_FLIGHT }, lane));
  const lastLines = await linesOfPart(lastPart);
  const warnings = reader.warnings();
  const answer = await send(lastPart, lastLines, {
    summary: {
      messages: conversation.length,
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

/**
 * The uploaded files by name, decoded. Lines name their file, so two files of one name would
 * leave one of them unreachable: a 400 naming the second. Base64 that does not decode is a 400
 * naming each file; bytes from a multipart part are taken as they are.
 */
function decodeMedia(files: ExportUpload['mediaFiles']): Map<string, { mimeType: string; bytes: Buffer }> {
  const firstOfName = new Map<string, number>();
  const sameName: Record<string, string[]> = {};
  files.forEach((f, i) => {
    const first = firstOfName.get(f.fileName);
    if (first === undefined) firstOfName.set(f.fileName, i);
    else sameName[`media_files.${i}.file_name`] = [`media_files.${first} has the same file name.`];
  });
  if (Object.keys(sameName).length > 0) throw ServiceError.validation(sameName);
  const byName = new Map<string, { mimeType: string; bytes: Buffer }>();
  const bad: Record<string, string[]> = {};
  files.forEach((f, i) => {
    if ('bytes' in f.content) {
      byName.set(f.fileName, { mimeType: f.mimeType, bytes: f.content.bytes });
      return;
    }
    const compact = f.content.base64.replace(/\s+/g, '');
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
 * The messages as chats takes them, read run by run in file order: each media line linked to its
 * uploaded file (stored through the sink, when it can), repeats numbered; what could not be
 * linked or stored is a warning, and so, once all is read, is each uploaded file no line names.
 */
function createLineReader(
  files: Map<string, { mimeType: string; bytes: Buffer }>,
  sink: MediaSink,
): {
  read(run: readonly ExportMessage[], offset: number): Promise<ImportedLine[]>;
  warnings(): ImportWarning[];
} {
  const warnings: ImportWarning[] = [];
  const used = new Set<string>();
  const seen = new Map<string, number>();
  async function read(run: readonly ExportMessage[], offset: number): Promise<ImportedLine[]> {
    const lines: ImportedLine[] = [];
    for (const [index, m] of run.entries()) {
      const key = contentKey(m);
      const ordinal = seen.get(key) ?? 0;
      seen.set(key, ordinal + 1);
      let media: ImportedLine['media'] = null;
      if (m.media) {
        const fileName = m.media.fileName;
        const file = fileName === null ? undefined : files.get(fileName);
        let stored: MediaFile | null = null;
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
          const outcome = await sink.store({ fileName, mimeType: file.mimeType, bytes: file.bytes });
          if ('stored' in outcome) stored = outcome.stored;
          else {
            warnings.push({
              line: m.line,
              file_name: fileName,
              code: 'media_not_stored',
              reason: `The media service refused the file: ${outcome.refused}; imported without its file.`,
            });
          }
        }
        media = {
          kind: m.media.kind,
          file_name: fileName,
          mime_type: stored?.mime_type ?? file?.mimeType ?? null,
          link: stored?.file ?? null,
          stored,
        };
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
        position: offset + index,
      });
    }
    return lines;
  }
  return {
    read,
    warnings() {
      const unused: ImportWarning[] = [...files.keys()]
        .filter((name) => !used.has(name))
        .map((name) => ({
          line: 0,
          file_name: name,
          code: 'media_file_unused',
          reason: 'No line of the export names this file.',
        }));
      return [...warnings, ...unused];
    },
  };
}

/**
 * Consecutive runs of messages (`[from, to)` in the conversation) whose lines each fit on the
 * bus; an export without messages is one empty part.
 */
function partsOf(conversation: readonly ExportMessage[]): [number, number][] {
  const parts: [number, number][] = [];
  let from = 0;
  let bytes = 0;
  for (const [at, m] of conversation.entries()) {
    const size = 3 * (m.text.length + (m.sender ?? '').length + (m.media?.fileName?.length ?? 0)) + 300;
    // The first part is small: it creates the chat, which the others wait for.
    const limit = parts.length === 0 ? FIRST_PART_MESSAGES : PART_MESSAGES;
    const count = at - from;
    if (count > 0 && (count >= limit || bytes + size > PART_BYTES)) {
      parts.push([from, at]);
      from = at;
      bytes = 0;
    }
    bytes += size;
  }
  parts.push([from, conversation.length]);
  return parts;
}
