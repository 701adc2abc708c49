import type { LocalDateTime, MediaKind } from '../src/index.ts';

/**
 * A renderer of chats in the export formats the parser supports: the property tests render
 * random chats and check the parser gets the same messages back. Each format writes the
 * header, placeholders and attachment lines the way that platform and language do (see
 * fixtures/SOURCES.md for where those facts come from).
 */

export interface ChatMessage {
  readonly at: LocalDateTime;
  readonly sender: Sender;
  readonly text: string;
  /** An attachment with a file (text is its caption) or a placeholder without one. */
  readonly media: { readonly kind: 'image' | 'audio'; readonly file: boolean } | null;
}

export interface Sender {
  /** As the parser reports it. */
  readonly name: string;
  /** As the app writes it (number senders carry directional marks and no-break spaces). */
  readonly written: string;
}

export interface RenderedMedia {
  readonly fileName: string | null;
  readonly kind: MediaKind;
}

export interface Rendered {
  readonly text: string;
  readonly media: RenderedMedia | null;
  /** The message text the parser must report (placeholders and attachments keep only a caption). */
  readonly expectedText: string;
}

export interface ExportStyle {
  readonly name: string;
  readonly deviceLanguage: string;
  /** Earliest year the format can write (Japanese Reiwa years start in 2019). */
  readonly fromYear: number;
  /** True when dates carry no year (older Android with month names). */
  readonly noYear: boolean;
  readonly render: (message: ChatMessage, index: number) => Rendered;
}

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');
const LRM = '\u200E';
const RLM = '\u200F';
const NNBSP = '\u202F';
const NBSP = '\u00A0';

const h12 = (h: number): number => (h % 12 === 0 ? 12 : h % 12);
const isPm = (h: number): boolean => h >= 12;
const arabicDigits = (text: string): string =>
  text.replace(/\d/g, (d) => String.fromCharCode(0x0660 + Number(d)));
const persianDigits = (text: string): string =>
  text.replace(/\d/g, (d) => String.fromCharCode(0x06f0 + Number(d)));
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

type Header = (t: LocalDateTime) => string;

/** The date in another calendar, as a phone set to it writes it (ICU's calendars, through Intl). */
function inCalendar(
  calendar: 'persian' | 'islamic-umalqura',
  t: LocalDateTime,
): { y: number; m: number; d: number } {
  const format = new Intl.DateTimeFormat(`en-u-ca-${calendar}`, {
    timeZone: 'UTC',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
  });
  const parts = Object.fromEntries(
    format.formatToParts(Date.UTC(t.year, t.month - 1, t.day)).map((p) => [p.type, p.value]),
  );
  return { y: Number(parts.year), m: Number(parts.month), d: Number(parts.day) };
}

interface Wording {
  /** Android: `IMG-….jpg (file attached)`. */
  readonly fileAttached: string;
  /** Android without media: whole body. */
  readonly mediaOmitted: string;
  /** iOS: `<attached: …>`. */
  readonly attached: string;
  /** iOS without media: per kind. */
  readonly omitted: Readonly<Record<'image' | 'audio', string>>;
}

const EN: Wording = {
  fileAttached: 'file attached',
  mediaOmitted: '<Media omitted>',
  attached: 'attached',
  omitted: { image: 'image omitted', audio: 'audio omitted' },
};
const DE: Wording = {
  fileAttached: 'Datei angehängt',
  mediaOmitted: '<Medien ausgeschlossen>',
  attached: 'Anhang',
  omitted: { image: 'Bild weggelassen', audio: 'Audio weggelassen' },
};
const ES: Wording = {
  fileAttached: 'archivo adjunto',
  mediaOmitted: '<Multimedia omitido>',
  attached: 'adjunto',
  omitted: { image: 'imagen omitida', audio: 'audio omitido' },
};

function fileStamp(t: LocalDateTime): string {
  return `${pad(t.year, 4)}${pad(t.month)}${pad(t.day)}`;
}

/** A device's export in one language: its header and wording; 2010 on, with years, unless `extra` says otherwise. */
type Device = (
  name: string,
  deviceLanguage: string,
  header: Header,
  wording: Wording,
  extra?: Partial<ExportStyle>,
) => ExportStyle;

const style = (
  name: string,
  deviceLanguage: string,
  extra: Partial<ExportStyle>,
  render: ExportStyle['render'],
): ExportStyle => ({ name, deviceLanguage, fromYear: 2010, noYear: false, ...extra, render });

const android: Device = (name, deviceLanguage, header, wording, extra = {}) =>
  style(name, deviceLanguage, extra, (m, index) => {
    const head = `${header(m.at)} - ${m.sender.written}: `;
    if (!m.media) return { text: head + m.text, media: null, expectedText: m.text };
    if (!m.media.file) {
      return {
        text: head + wording.mediaOmitted,
        media: { fileName: null, kind: 'unknown' },
        expectedText: '',
      };
    }
    const fileName =
      m.media.kind === 'image'
        ? `IMG-${fileStamp(m.at)}-WA${pad(index % 10000, 4)}.jpg`
        : `PTT-${fileStamp(m.at)}-WA${pad(index % 10000, 4)}.opus`;
    const caption = m.text.length > 0 ? `\n${m.text}` : '';
    return {
      text: `${head}${fileName} (${wording.fileAttached})${caption}`,
      media: { fileName, kind: m.media.kind },
      expectedText: m.text,
    };
  });

const ios: Device = (name, deviceLanguage, header, wording, extra = {}) =>
  style(name, deviceLanguage, extra, (m, index) => {
    const plain = `[${header(m.at)}] ${m.sender.written}: `;
    if (!m.media) return { text: plain + m.text, media: null, expectedText: m.text };
    const marked = `${LRM}[${header(m.at)}] ${m.sender.written}: ${LRM}`;
    if (!m.media.file) {
      return {
        text: marked + wording.omitted[m.media.kind],
        media: { fileName: null, kind: m.media.kind },
        expectedText: '',
      };
    }
    const t = m.at;
    const stamp = `${pad(t.year, 4)}-${pad(t.month)}-${pad(t.day)}-${pad(t.hour)}-${pad(t.minute)}-${pad(t.second)}`;
    const fileName = `${pad(index + 1, 8)}-${m.media.kind === 'image' ? 'PHOTO' : 'AUDIO'}-${stamp}.${m.media.kind === 'image' ? 'jpg' : 'opus'}`;
    // iOS writes a caption as its own message, so the generator gives iOS attachments none.
    return {
      text: `${marked}<${wording.attached}: ${fileName}>`,
      media: { fileName, kind: m.media.kind },
      expectedText: '',
    };
  });

const yy = (t: LocalDateTime): string => pad(t.year % 100);
const hm = (t: LocalDateTime, sep = ':'): string => `${pad(t.hour)}${sep}${pad(t.minute)}`;
const hms = (t: LocalDateTime, sep = ':'): string => `${hm(t, sep)}${sep}${pad(t.second)}`;
const am = (t: LocalDateTime): string => (isPm(t.hour) ? 'PM' : 'AM');

export const STYLES: readonly ExportStyle[] = [
  android(
    'android en-US',
    'en-US',
    (t) => `${t.month}/${t.day}/${yy(t)}, ${h12(t.hour)}:${pad(t.minute)}${NNBSP}${am(t)}`,
    EN,
  ),
  android('android en-GB', 'en-GB', (t) => `${pad(t.day)}/${pad(t.month)}/${t.year}, ${hm(t)}`, EN),
  android('android de', 'de', (t) => `${pad(t.day)}.${pad(t.month)}.${yy(t)}, ${hm(t)}`, DE),
  android(
    'android es-MX',
    'es-MX',
    (t) =>
      `${t.day}/${t.month}/${t.year} ${h12(t.hour)}:${pad(t.minute)} ${isPm(t.hour) ? 'p.' : 'a.'}${NBSP}m.`,
    ES,
  ),
  android('android id', 'id', (t) => `${pad(t.day)}/${pad(t.month)}/${yy(t)} ${hm(t, '.')}`, EN),
  android('android nl dashes', 'nl', (t) => `${pad(t.day)}-${pad(t.month)}-${t.year} ${hm(t)}`, EN),
  android(
    'android ko',
    'ko',
    (t) =>
      `${t.year}. ${t.month}. ${t.day}. ${isPm(t.hour) ? '오후' : '오전'} ${h12(t.hour)}:${pad(t.minute)}`,
    EN,
  ),
  android(
    'android zh-CN',
    'zh-CN',
    (t) => `${t.year}/${t.month}/${t.day} ${isPm(t.hour) ? '下午' : '上午'}${h12(t.hour)}:${pad(t.minute)}`,
    EN,
  ),
  android(
    'android ar',
    'ar',
    (t) =>
      `${arabicDigits(String(t.day))}${RLM}/${arabicDigits(String(t.month))}${RLM}/${arabicDigits(String(t.year))}، ${arabicDigits(`${h12(t.hour)}:${pad(t.minute)}`)} ${isPm(t.hour) ? 'م' : 'ص'}`,
    EN,
  ),
  android(
    'android fa',
    'fa',
    (t) => `${persianDigits(`${t.year}/${t.month}/${t.day}`)}، ${persianDigits(hm(t))}`,
    EN,
  ),
  android('android fi', 'fi', (t) => `${t.day}.${t.month}.${t.year} klo ${t.hour}.${pad(t.minute)}`, EN),
  android('android cs', 'cs', (t) => `${t.day}. ${t.month}. ${t.year} ${hm(t)}`, EN),
  android('android sv', 'sv', (t) => `${t.year}-${pad(t.month)}-${pad(t.day)} ${hm(t)}`, EN),
  android('android time first', 'en-IE', (t) => `${hm(t)}, ${pad(t.day)}/${pad(t.month)}/${t.year}`, EN),
  android(
    'android month names',
    'en-US',
    (t) => `${MONTHS[t.month - 1]} ${t.day}, ${h12(t.hour)}:${pad(t.minute)} ${am(t)}`,
    EN,
    { noYear: true },
  ),
  ios(
    'ios en-US',
    'en-US',
    (t) => `${t.month}/${t.day}/${yy(t)}, ${h12(t.hour)}:${pad(t.minute)}:${pad(t.second)}${NNBSP}${am(t)}`,
    EN,
  ),
  ios('ios en-GB', 'en-GB', (t) => `${pad(t.day)}/${pad(t.month)}/${t.year}, ${hms(t)}`, EN),
  ios('ios de', 'de', (t) => `${pad(t.day)}.${pad(t.month)}.${yy(t)}, ${hms(t)}`, DE),
  ios(
    'ios fi dotted',
    'fi',
    (t) => `${t.day}.${t.month}.${t.year}, ${t.hour}.${pad(t.minute)}.${pad(t.second)}`,
    EN,
  ),
  ios(
    'ios fa persian calendar',
    'fa',
    (t) => {
      const p = inCalendar('persian', t);
      return `${persianDigits(`${p.y}/${p.m}/${p.d}`)}، ${persianDigits(hms(t))}`;
    },
    EN,
  ),
  android(
    'android ar islamic calendar',
    'ar-SA',
    (t) => {
      const h = inCalendar('islamic-umalqura', t);
      return `${arabicDigits(String(h.d))}${RLM}/${arabicDigits(String(h.m))}${RLM}/${arabicDigits(String(h.y))}، ${arabicDigits(hm(t))}`;
    },
    EN,
  ),
  ios('ios buddhist', 'en-US', (t) => `${t.month}/${t.day}/${t.year + 543} BE, ${hms(t)}`, EN),
  ios('ios reiwa', 'en-US', (t) => `${t.month}/${t.day}/R${t.year - 2018}, ${hms(t)}`, EN, {
    fromYear: 2019,
  }),
  ios(
    'ios zh-TW',
    'zh-TW',
    (t) =>
      `${t.year}/${t.month}/${t.day} ${isPm(t.hour) ? '下午' : '上午'}${h12(t.hour)}:${pad(t.minute)}:${pad(t.second)}`,
    EN,
  ),
  ios(
    'ios es 12h',
    'es',
    (t) =>
      `${t.day}/${t.month}/${yy(t)}, ${h12(t.hour)}:${pad(t.minute)}:${pad(t.second)}${NNBSP}${isPm(t.hour) ? 'p.' : 'a.'}${NBSP}m.`,
    ES,
  ),
  style('ios legacy', 'en-US', {}, (m) => ({
    text: `${m.at.month}/${m.at.day}/${yy(m.at)}, ${h12(m.at.hour)}:${pad(m.at.minute)}:${pad(m.at.second)} ${am(m.at)}: ${m.sender.written}: ${m.text}`,
    media: null,
    expectedText: m.text,
  })),
];

/** Renders a chat as one export text (LF line ends; the parser's CRLF handling is tested by fixtures). */
export function renderChat(
  style: ExportStyle,
  messages: readonly ChatMessage[],
): { text: string; rendered: Rendered[] } {
  const rendered = messages.map((m, i) => style.render(m, i));
  return { text: `${rendered.map((r) => r.text).join('\n')}\n`, rendered };
}
