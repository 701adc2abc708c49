/** Which header shape the exporting app wrote. */
export type ExportPlatform =
  /** `date, time - Sender: text` (Android, every era). */
  | 'android'
  /** `[date, time] Sender: text` (iOS). */
  | 'ios'
  /** `date, time: Sender: text` (iOS before the brackets, about 2014 to 2017). */
  | 'ios_legacy';

/** Order of the numeric date fields, decided once per file. */
export type DateOrder = 'DMY' | 'MDY' | 'YMD';

/** What a media line stands for, from its file name or its localized placeholder. */
export type MediaKind = 'image' | 'video' | 'audio' | 'sticker' | 'gif' | 'document' | 'contact' | 'unknown';

/** Lines the app writes itself (not typed by anyone), told apart per language. */
export type SystemKind =
  | 'encryption'
  | 'security_code'
  | 'membership'
  | 'number_change'
  | 'deleted'
  | 'missed_call'
  | 'other';

export interface ExportMedia {
  /** The file the line links to (`IMG-….jpg (file attached)`, `<attached: 00000035-PHOTO-….jpg>`), null for placeholders such as `<Media omitted>`. */
  readonly fileName: string | null;
  readonly kind: MediaKind;
}

export interface LocalDateTime {
  readonly year: number;
  readonly month: number;
  readonly day: number;
  readonly hour: number;
  readonly minute: number;
  readonly second: number;
}

export interface ExportMessage {
  /** 1-based line number of the message's header line. */
  readonly line: number;
  /** The device's wall-clock time, as written (no zone): `YYYY-MM-DDTHH:MM:SS`. */
  readonly localTime: string;
  readonly local: LocalDateTime;
  /** The sender as written (contact name or formatted number), null for system lines without one. */
  readonly sender: string | null;
  /** The sender's digits when the sender is a phone number (`+55 61 8121-3457` → `556181213457`). */
  readonly senderNumber: string | null;
  /** Message text, lines joined by `\n`; for media lines the caption (may be empty). */
  readonly text: string;
  /** The app marked the message as edited (`<This message was edited>`, removed from `text`). */
  readonly edited: boolean;
  readonly media: ExportMedia | null;
  /** Set for lines the app wrote itself; such lines are not conversation messages. */
  readonly system: SystemKind | null;
}

export interface ExportFormat {
  readonly platform: ExportPlatform;
  /** Null when every date names its month (`Feb 5, 2014`). */
  readonly dateOrder: DateOrder | null;
  readonly clock: '12h' | '24h';
  /** How the order was decided, for diagnostics. */
  readonly decidedBy: DateOrderEvidence | null;
}

export type DateOrderEvidence =
  | 'only_reading'
  | 'field_ranges'
  | 'attachment_names'
  | 'chronology'
  | 'plausibility'
  | 'device_language';

export interface DateReading {
  readonly order: DateOrder;
  /** The file's first date under that reading, `YYYY-MM-DD`. */
  readonly firstDate: string;
}

export type ParseFailure =
  | { readonly ok: false; readonly error: 'not_an_export'; readonly detail: string }
  | {
      readonly ok: false;
      readonly error: 'mixed_formats';
      readonly detail: string;
      readonly lines: readonly number[];
    }
  | {
      readonly ok: false;
      readonly error: 'ambiguous_date_order';
      readonly detail: string;
      readonly readings: readonly DateReading[];
    };

export interface ParseSuccess {
  readonly ok: true;
  readonly format: ExportFormat;
  readonly messages: readonly ExportMessage[];
}

export type ParseResult = ParseSuccess | ParseFailure;

export interface ParseOptions {
  /** The exporting device's language (`de`, `en-US`, `pt_BR`): the last tie-breaker for the date order, never more. */
  readonly deviceLanguage?: string;
  /** Dates after this instant (plus a day of zone slack) are implausible; omit to skip that check. */
  readonly now?: Date;
  /** Year for exports whose dates carry none (older Android `Feb 5, 12:45`): the year of the last message. */
  readonly yearOfLastMessage?: number;
}
