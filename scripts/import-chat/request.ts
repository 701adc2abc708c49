import { readFile } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import { type ExportMessage, parseChatExport } from '@switchboard/chat-export';
import { strFromU8, unzipSync } from 'fflate';

/** What an operator's export becomes: the `chat_import/` request body. */
export interface ChatImportBody {
  chat_text: string;
  chat_participants: { handle: string; phone_number: string }[];
  utc_offset_minutes: number;
  time_zone?: string;
  device_language_code: string;
  media_files: { b64_content: string; mime_type: string; file_name: string }[];
}

const MIME: Record<string, string> = {
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.png': 'image/png',
  '.webp': 'image/webp',
  '.gif': 'image/gif',
  '.heic': 'image/heic',
  '.mp4': 'video/mp4',
  '.mov': 'video/quicktime',
  '.3gp': 'video/3gpp',
  '.opus': 'audio/ogg',
  '.ogg': 'audio/ogg',
  '.m4a': 'audio/mp4',
  '.mp3': 'audio/mpeg',
  '.aac': 'audio/aac',
  '.amr': 'audio/amr',
  '.pdf': 'application/pdf',
  '.vcf': 'text/vcard',
  '.txt': 'text/plain',
};

export function mimeTypeOf(fileName: string): string {
  return MIME[extname(fileName).toLowerCase()] ?? 'application/octet-stream';
}

/**
 * The export's text and media: a `.txt` alone, or the `.zip` the app shares (iOS: `_chat.txt`
 * plus the media; Android: `WhatsApp Chat with ….txt` plus the media).
 */
export async function readExport(path: string): Promise<{ text: string; media: Map<string, Uint8Array> }> {
  const bytes = await readFile(path);
  if (extname(path).toLowerCase() !== '.zip') return { text: bytes.toString('utf8'), media: new Map() };
  const entries = unzipSync(new Uint8Array(bytes));
  const names = Object.keys(entries).filter((n) => !n.endsWith('/') && !n.startsWith('__MACOSX/'));
  const textName =
    names.find((n) => basename(n) === '_chat.txt') ?? names.find((n) => extname(n).toLowerCase() === '.txt');
  if (!textName) throw new Error(`${path} holds no chat text (.txt)`);
  const media = new Map<string, Uint8Array>();
  for (const name of names) {
    const data = entries[name];
    if (name !== textName && data) media.set(basename(name), data);
  }
  return { text: strFromU8(entries[textName] ?? new Uint8Array()), media };
}

/** `+02:00`, `-3`, `-180` (minutes when it is not an hour count) → minutes ahead of UTC. */
export function parseOffset(text: string): number {
  const clock = /^([+-])?(\d{1,2}):(\d{2})$/.exec(text.trim());
  if (clock) return (clock[1] === '-' ? -1 : 1) * (Number(clock[2]) * 60 + Number(clock[3]));
  const n = Number(text);
  if (!Number.isInteger(n)) throw new Error(`--utc-offset ${text}: give minutes (-180) or hours (+02:00)`);
  return Math.abs(n) <= 14 ? n * 60 : n;
}

export interface BuildOptions {
  waId: string;
  /** The customer's name as the export writes it, when it writes a name instead of the number. */
  handle?: string;
  utcOffsetMinutes: number;
  timeZone?: string;
  language: string;
}

/**
 * The request for one export, checked locally first (the same parser the inbox runs), so an
 * operator learns of a wrong file or a missing `--handle` before uploading anything.
 */
export function buildRequest(
  text: string,
  media: Map<string, Uint8Array>,
  o: BuildOptions,
): { body: ChatImportBody; messages: number; senders: string[] } {
  const parsed = parseChatExport(text, { deviceLanguage: o.language, now: new Date() });
  if (!parsed.ok) {
    const readings =
      parsed.error === 'ambiguous_date_order'
        ? ` (readings: ${parsed.readings.map((r) => `${r.order} from ${r.firstDate}`).join(', ')}; give --lang with a country)`
        : '';
    throw new Error(`${parsed.error}: ${parsed.detail}${readings}`);
  }
  const conversation = parsed.messages.filter((m: ExportMessage) => m.system === null && m.sender !== null);
  const senders = [...new Set(conversation.map((m) => m.sender ?? ''))];
  const byNumber = conversation.some((m) => m.senderNumber === o.waId);
  if (!byNumber && !o.handle) {
    throw new Error(
      `No sender is the number ${o.waId}; the export names the customer (senders: ${senders.join(', ')}): give --handle`,
    );
  }
  const body: ChatImportBody = {
    chat_text: text,
    chat_participants: o.handle ? [{ handle: o.handle, phone_number: o.waId }] : [],
    utc_offset_minutes: o.utcOffsetMinutes,
    ...(o.timeZone && { time_zone: o.timeZone }),
    device_language_code: o.language,
    media_files: [...media].map(([file_name, data]) => ({
      file_name,
      mime_type: mimeTypeOf(file_name),
      b64_content: Buffer.from(data).toString('base64'),
    })),
  };
  return { body, messages: conversation.length, senders };
}
