import { MONTH_NAME_PATTERN, monthFromName } from './calendar.ts';
import type { ExportPlatform } from './types.ts';

/**
 * Header shapes, matched on the normalized start of a line (see normalize.ts):
 *
 *   android      `5/3/23, 2:05 PM - Sender: text`, `05.03.2023, 14:05 - …`, `2023. 3. 5. 오후 2:05 - …`
 *   ios          `[5/3/23, 2:05:09 PM] Sender: text`, `[2023/03/05 14:05:09] …`
 *   ios_legacy   `5/3/23, 2:05:09 PM: Sender: text` (no brackets, `:` after the time)
 *
 * with the date numeric (any order, `/ . -` or `. ` separators, trailing dot, two- or four-digit
 * or era years) or with a month name and maybe no year (older Android), and the time before or
 * after the date, with `:` or `.` between its parts, 12-hour markers after (`PM`, `p. m.`, `م`)
 * or before (`午後`, `오후`, `下午`) it, and Finnish `klo` between date and time.
 */

const FIELD = '(?:[RH]\\d{1,2}|\\d{1,4}(?: ?BE)?)';
const numericDate = (separatorGroup: number): string =>
  `(${FIELD})(\\. ?|/|-)(${FIELD})\\${separatorGroup}(${FIELD})\\.?`;
const NAMED_DATE = `(?:(${MONTH_NAME_PATTERN})\\.? (\\d{1,2})|(\\d{1,2})\\.? (${MONTH_NAME_PATTERN})\\.?)(?:,? (\\d{4}))?`;
const BEFORE = '(午前|午後|오전|오후|上午|下午|中午|凌晨|早上|晚上)';
const AFTER = '(a\\.? ?m\\.?|p\\.? ?m\\.?|ص|م|π\\.? ?μ\\.?|μ\\.? ?μ\\.?)';
const TIME = `(?:${BEFORE} ?)?(\\d{1,2})[:.](\\d{2})(?:[:.](\\d{2}))?(?: ?${AFTER})?`;
const BETWEEN = '(?:,? (?:klo )?|,)';
const END = '(\\] ?| [-–] |: )';

type DateParts =
  | {
      readonly kind: 'numeric';
      readonly fields: readonly [string, string, string];
      readonly separator: string;
    }
  | {
      readonly kind: 'named';
      readonly month: number;
      readonly day: number;
      readonly year: number | null;
      readonly monthFirst: boolean;
    };

export interface TimeParts {
  readonly hour: number;
  readonly minute: number;
  readonly second: number;
  readonly meridiem: 'am' | 'pm' | null;
}

export interface Header {
  readonly platform: ExportPlatform;
  readonly date: DateParts;
  readonly time: TimeParts;
  /** Everything that must be the same on every header line of one export (platform, shape, separator, clock), as one number. */
  readonly signature: number;
  /** End of the header in the normalized prefix. */
  readonly end: number;
}

const MORNING = new Set(['午前', '오전', '上午', '凌晨', '早上', 'ص']);

function meridiem(marker: string | undefined): 'am' | 'pm' | null {
  if (!marker) return null;
  if (MORNING.has(marker)) return 'am';
  const latin = marker.replace(/[.\s]/g, '').toLowerCase();
  if (latin === 'am' || latin === 'πμ') return 'am';
  return 'pm';
}

type Groups = readonly (string | undefined)[];

interface Shape {
  readonly name: string;
  /** Group of the 12-hour marker written before the time. */
  readonly markerBefore: number;
  readonly pattern: RegExp;
  readonly read: (m: Groups) => { date: DateParts; time: TimeParts; bracket: boolean; end: string } | null;
}

const time = (m: Groups, at: number): TimeParts => ({
  hour: Number(m[at + 1]),
  minute: Number(m[at + 2]),
  second: m[at + 3] === undefined ? 0 : Number(m[at + 3]),
  meridiem: meridiem(m[at] ?? m[at + 4]),
});

const numeric = (m: Groups, at: number): DateParts => ({
  kind: 'numeric',
  fields: [m[at] ?? '', m[at + 2] ?? '', m[at + 3] ?? ''],
  separator: (m[at + 1] ?? '').trim(),
});

const named = (m: Groups, at: number): DateParts | null => {
  const monthFirst = m[at] !== undefined;
  const month = monthFromName((monthFirst ? m[at] : m[at + 3]) ?? '');
  if (month === null) return null;
  const day = Number(monthFirst ? m[at + 1] : m[at + 2]);
  const year = m[at + 4] === undefined ? null : Number(m[at + 4]);
  return { kind: 'named', month, day, year, monthFirst };
};

const SHAPES: readonly Shape[] = [
  {
    name: 'date-time',
    markerBefore: 6,
    pattern: new RegExp(`^(\\[)?${numericDate(3)}${BETWEEN}${TIME}${END}`, 'iu'),
    read: (m) => ({ date: numeric(m, 2), time: time(m, 6), bracket: m[1] !== undefined, end: m[11] ?? '' }),
  },
  {
    name: 'named-time',
    markerBefore: 7,
    pattern: new RegExp(`^(\\[)?${NAMED_DATE}${BETWEEN}${TIME}${END}`, 'iu'),
    read: (m) => {
      const date = named(m, 2);
      return date && { date, time: time(m, 7), bracket: m[1] !== undefined, end: m[12] ?? '' };
    },
  },
  {
    name: 'time-date',
    markerBefore: 2,
    pattern: new RegExp(`^(\\[)?${TIME}${BETWEEN}${numericDate(8)}${END}`, 'iu'),
    read: (m) => ({ date: numeric(m, 7), time: time(m, 2), bracket: m[1] !== undefined, end: m[11] ?? '' }),
  },
  {
    name: 'time-named',
    markerBefore: 2,
    pattern: new RegExp(`^(\\[)?${TIME}${BETWEEN}${NAMED_DATE}${END}`, 'iu'),
    read: (m) => {
      const date = named(m, 7);
      return date && { date, time: time(m, 2), bracket: m[1] !== undefined, end: m[12] ?? '' };
    },
  },
];

const PLATFORMS: readonly ExportPlatform[] = ['android', 'ios', 'ios_legacy'];
const SEPARATORS = ['/', '.', '-'];

/** Lines that cannot start a header: skips the regexes for most continuation lines. */
const CANNOT_START = /^[^\d[\p{L}]/u;

/** Per-parse memory of the shape that matched last, tried first on the next line. */
export interface ShapeHint {
  shape: number;
}

/** The header at the start of a normalized line, or null for continuation lines. */
export function matchHeader(text: string, hint: ShapeHint): Header | null {
  if (text.length < 8 || CANNOT_START.test(text)) return null;
  for (let attempt = 0; attempt < SHAPES.length; attempt++) {
    const index = (hint.shape + attempt) % SHAPES.length;
    const shape = SHAPES[index];
    if (!shape) continue;
    const m = shape.pattern.exec(text);
    if (!m) continue;
    const read = shape.read(m);
    if (!read) continue;
    const closing = read.end.startsWith(']');
    if (read.bracket !== closing) continue;
    const platform: ExportPlatform = read.bracket
      ? 'ios'
      : read.end.trim() === ':'
        ? 'ios_legacy'
        : 'android';
    const t = read.time;
    if (t.minute > 59 || t.second > 59 || t.hour > 23 || (t.meridiem !== null && (t.hour < 1 || t.hour > 12)))
      continue;
    hint.shape = index;
    const separator =
      read.date.kind === 'numeric' ? SEPARATORS.indexOf(read.date.separator) : SEPARATORS.length;
    const clock = t.meridiem === null ? 0 : m[shape.markerBefore] !== undefined ? 1 : 2;
    return {
      platform,
      date: read.date,
      time: t,
      signature: ((PLATFORMS.indexOf(platform) * SHAPES.length + index) * 8 + separator) * 3 + clock,
      end: m[0].length,
    };
  }
  return null;
}
