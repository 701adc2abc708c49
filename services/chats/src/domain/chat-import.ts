import { hash } from 'node:crypto';
import {
  type ChatImportContact,
  type ImportedLine,
  MESSAGE_TYPE_OF_IMPORT_KIND,
  type MessageMedia,
  ServiceError,
  WaIdSchema,
} from '@switchboard/proto';

/**
 * The rules of importing an exported chat: who the customer is, the UTC time of a line, the
 * stable id of an imported message and its network-shaped body. Pure.
 */

export interface ImportSender {
  readonly name: string;
  readonly number: string | null;
}

export interface ImportCustomer {
  readonly waId: string;
  /** The name the export gives the customer, when it is not just their number. */
  readonly name: string | null;
  readonly isCustomer: (sender: string, senderNumber: string | null) => boolean;
}

const digits = (phone: string): string => phone.replace(/\D/g, '');
/** Names compare as the export may write them: case, directional marks, `~ ` and spacing aside. */
const nameKey = (name: string): string =>
  name
    .replace(/[\u200E\u200F\u202A-\u202E\u2066-\u2069]/g, '')
    .replace(/^~\s*/, '')
    .replace(/\s+/g, ' ')
    .trim()
    .toLowerCase();

function validWaId(number: string): string {
  const parsed = WaIdSchema.safeParse(number);
  if (!parsed.success) throw new ServiceError('chat_customer_unknown', `${number} is not a phone number.`);
  return parsed.data;
}

/**
 * The customer of an exported one-to-one chat. With `chat_participants`: the participant whose
 * number is not the business's (with two, one must be the business's own number). Without: the
 * one sender written as a phone number other than the business's. Every sender who is not the
 * customer is the business (the exporting phone's owner or its staff).
 */
export function decideCustomer(
  participants: readonly ChatImportContact[],
  senders: readonly ImportSender[],
  businessNumber: string,
): ImportCustomer {
  if (participants.length > 2 || senders.length > 2) {
    throw new ServiceError(
      'too_many_chat_participants',
      `The export has ${Math.max(participants.length, senders.length)} participants; a chat import holds at most two.`,
    );
  }
  const business = digits(businessNumber);
  if (participants.length > 0) {
    const customers = participants.filter((p) => digits(p.phone_number) !== business);
    if (customers.length !== 1) {
      throw new ServiceError(
        'chat_customer_unknown',
        customers.length === 0
          ? 'Every participant has the business’s own number.'
          : 'With two participants, one of them must have the business’s own number.',
      );
    }
    const [customer] = customers;
    if (!customer) throw new ServiceError('chat_customer_unknown');
    const waId = validWaId(digits(customer.phone_number));
    const handle = nameKey(customer.handle);
    const isCustomer = (sender: string, senderNumber: string | null) =>
      nameKey(sender) === handle || senderNumber === waId;
    if (!senders.some((s) => isCustomer(s.name, s.number))) {
      throw new ServiceError(
        'chat_customer_unknown',
        `No message in the export is from “${customer.handle}”: give the name exactly as the export writes it.`,
      );
    }
    return { waId, name: customer.handle.trim(), isCustomer };
  }
  const numbered = senders.filter((s) => s.number !== null && s.number !== business);
  const only = numbered[0];
  if (numbered.length !== 1 || !only?.number) {
    throw new ServiceError(
      'chat_customer_unknown',
      numbered.length === 0
        ? 'No sender is written as a phone number: give chat_participants (handle and phone_number of the customer).'
        : 'Both senders are phone numbers: give chat_participants to say which one is the customer.',
    );
  }
  const waId = validWaId(only.number);
  return { waId, name: null, isCustomer: (_sender, senderNumber) => senderNumber === waId };
}

/**
 * Local wall-clock times of the exporting device to POSIX seconds. With an IANA `timeZone` each
 * time gets the offset that zone had then (summer time included); a wall-clock time that occurs
 * twice when clocks go back, or never when they go forward, reads with the larger of the two
 * offsets (the earlier instant). Without one, every time gets the one `utc_offset_minutes`,
 * which is off by the summer-time difference for messages from the other half of the year.
 */
export function createClock(
  utcOffsetMinutes: number,
  timeZone: string | undefined,
): (local: string) => number {
  if (!timeZone) return (local) => Math.floor((wallMs(local) - utcOffsetMinutes * 60_000) / 1000);
  const format = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  });
  const offsetAt = (utcMs: number): number => {
    const parts = Object.fromEntries(format.formatToParts(utcMs).map((p) => [p.type, p.value]));
    const wall = Date.UTC(
      Number(parts.year),
      Number(parts.month) - 1,
      Number(parts.day),
      Number(parts.hour),
      Number(parts.minute),
      Number(parts.second),
    );
    return wall - Math.floor(utcMs / 1000) * 1000;
  };
  // Zones change offset on the hour: one answer per local hour.
  const cache = new Map<string, number>();
  return (local) => {
    const wall = wallMs(local);
    const key = local.slice(0, 13);
    let offset = cache.get(key);
    if (offset === undefined) {
      // The zone's offsets a day either side: a reading is valid when the instant it gives has
      // that very offset. Two valid (clocks went back) or none (clocks went forward): the larger.
      const around = [...new Set([offsetAt(wall - 86_400_000), offsetAt(wall), offsetAt(wall + 86_400_000)])];
      const valid = around.filter((o) => offsetAt(wall - o) === o);
      offset = Math.max(...(valid.length > 0 ? valid : around));
      cache.set(key, offset);
    }
    return Math.floor((wall - offset) / 1000);
  };
}

function wallMs(local: string): number {
  return Date.UTC(
    Number(local.slice(0, 4)),
    Number(local.slice(5, 7)) - 1,
    Number(local.slice(8, 10)),
    Number(local.slice(11, 13)),
    Number(local.slice(14, 16)),
    Number(local.slice(17, 19)),
  );
}

/**
 * The id of an imported message: the same export line always gets the same id, so importing an
 * export again, or a later export that overlaps it, stores only what is new. From the chat, the
 * time as written, the sender, the content, and the line's place among identical lines.
 */
/** The UUID variant digit (10xx) for a hex digit: its two low bits kept. */
const VARIANT_DIGIT: Record<string, string> = Object.fromEntries(
  [...'0123456789abcdef'].map((d) => [d, ((Number.parseInt(d, 16) & 0x3) | 0x8).toString(16)]),
);

export function importedMessageId(waId: string, line: ImportedLine): string {
  const key = JSON.stringify([
    waId,
    line.local_time,
    line.sender,
    line.text,
    line.media?.kind ?? null,
    line.media?.file_name ?? null,
    line.ordinal,
  ]);
  const digest = hash('sha256', key, 'hex');
  // Shaped as a UUID (version 8: custom) for the `uuid` id column, led by the time as written
  // (48 bits of milliseconds), so one import's ids grow with time and go to the end of the index;
  // the rest is the digest from its 13th digit, with the version and variant bits set.
  const time = wallMs(line.local_time).toString(16).padStart(12, '0').slice(-12);
  const variant = VARIANT_DIGIT[digest.charAt(16)] ?? '8';
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-8${digest.slice(13, 16)}-${variant}${digest.slice(17, 20)}-${digest.slice(20, 32)}`;
}

/**
 * The message as the network shapes it: customer messages like a received webhook message
 * (`from`, `id`, `timestamp`), the business's like a send request (`to`); media types carry the
 * stored file's `link` (and, stored in the media service, its inbox media `id` and `sha256`) when
 * there is one, and `media: null` when the file could not be stored.
 * Every imported body says `imported: true`, and `edited: true` when the app marked it edited.
 */
export function importedPayload(
  waId: string,
  id: string,
  line: ImportedLine,
  fromUs: boolean,
  timestamp: number,
): { type: string; payload: Record<string, unknown> } {
  const envelope = fromUs
    ? { messaging_product: 'whatsapp', recipient_type: 'individual', to: waId }
    : { from: waId, id, timestamp: String(timestamp) };
  const edited = line.edited ? { edited: true } : {};
  if (!line.media) {
    return {
      type: 'text',
      payload: { ...envelope, type: 'text', text: { body: line.text }, ...edited, imported: true },
    };
  }
  const type = MESSAGE_TYPE_OF_IMPORT_KIND[line.media.kind];
  const content: Record<string, unknown> = {};
  const stored = line.media.stored ?? null;
  // The inbox's own file, by id and by link (either sends it again; chats reads both).
  if (stored) content.id = stored.id;
  if (line.media.link) content.link = line.media.link;
  if (stored) content.sha256 = stored.sha256;
  if (line.text && (type === 'image' || type === 'video' || type === 'document')) content.caption = line.text;
  if (line.media.file_name && type === 'document') content.filename = line.media.file_name;
  if (line.media.mime_type) content.mime_type = line.media.mime_type;
  const media = line.media.link
    ? {
        ...(stored && { id: stored.id }),
        link: line.media.link,
        file_name: line.media.file_name,
        mime_type: line.media.mime_type,
      }
    : null;
  return {
    type,
    payload: {
      ...envelope,
      type,
      ...(type === 'unsupported' ? {} : { [type]: content }),
      media,
      file_name: line.media.file_name,
      ...(line.text && !('caption' in content) ? { text: { body: line.text } } : {}),
      ...edited,
      imported: true,
    },
  };
}

/** The Message's `media` of an imported line: its stored file, or null when it has none. */
export function importedMedia(line: ImportedLine): MessageMedia | null {
  const stored = line.media?.stored;
  return stored ? { ...stored, status: 'stored' } : null;
}
