import {
  type DateField,
  dateOrderForLanguage,
  fromCalendar,
  gregorianYear,
  isValidDate,
} from './calendar.ts';
import type { DateOrder, DateOrderEvidence, DateReading } from './types.ts';

export interface NumericDate {
  readonly fields: readonly [DateField, DateField, DateField];
  /** Seconds since midnight, for the chronology check. */
  readonly secondOfDay: number;
  /** `YYYY-MM-DD` found in an attachment name on that line (`IMG-20230305-WA0001.jpg`). */
  readonly embedded: string | null;
}

export interface YearMonthDay {
  readonly year: number;
  readonly month: number;
  readonly day: number;
}

const NO_DATE: YearMonthDay = { year: 0, month: 0, day: 0 };

export function readDate(fields: readonly [DateField, DateField, DateField], order: DateOrder): YearMonthDay {
  const [a, b, c] = fields;
  const year = order === 'YMD' ? a : c;
  const month = order === 'MDY' ? a : b;
  const day = order === 'DMY' ? a : order === 'MDY' ? b : c;
  // Persian and Islamic dates convert whole: their months are not the Gregorian ones.
  if (year.era === 'AP' || year.era === 'AH') {
    return fromCalendar(year.era, year.value, month.value, day.value) ?? NO_DATE;
  }
  return { year: gregorianYear(year), month: month.value, day: day.value };
}

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');
export const isoDate = (d: YearMonthDay): string => `${pad(d.year, 4)}-${pad(d.month)}-${pad(d.day)}`;

export type DateOrderDecision =
  | { readonly ok: true; readonly order: DateOrder; readonly evidence: DateOrderEvidence }
  | { readonly ok: false; readonly reason: 'inconsistent' | 'no_valid_reading' }
  | { readonly ok: false; readonly reason: 'ambiguous'; readonly readings: readonly DateReading[] };

export interface DecideOptions {
  readonly deviceLanguage?: string;
  readonly now?: Date;
}

/** The app appeared in 2009: no export holds an earlier message. */
const EARLIEST = Date.UTC(2009, 0, 1);

/**
 * Decides the order of the numeric date fields once for a whole file, from the strongest
 * evidence to the weakest: which readings give real dates at all (a field above 12 is a day),
 * dates embedded in attachment names, chronological order (exports are written oldest first),
 * plausibility (nothing before 2009 or after now), and only then the device language. When
 * none of these decides, the answer says so with both readings instead of guessing.
 */
export function decideDateOrder(dates: readonly NumericDate[], options: DecideOptions): DateOrderDecision {
  const yearFirst = dates.some((d) => d.fields[0].isYear);
  const yearLast = dates.some((d) => d.fields[2].isYear);
  if (yearFirst && yearLast) return { ok: false, reason: 'inconsistent' };
  const initial: DateOrder[] = yearFirst ? ['YMD'] : yearLast ? ['DMY', 'MDY'] : ['DMY', 'MDY', 'YMD'];

  const readings = new Map<DateOrder, YearMonthDay[]>();
  for (const order of initial) {
    const read: YearMonthDay[] = [];
    let valid = true;
    for (const d of dates) {
      const ymd = readDate(d.fields, order);
      if (!isValidDate(ymd.year, ymd.month, ymd.day)) {
        valid = false;
        break;
      }
      read.push(ymd);
    }
    if (valid) readings.set(order, read);
  }
  let remaining = [...readings.keys()];
  if (remaining.length === 0) return { ok: false, reason: 'no_valid_reading' };
  if (remaining.length === 1 && initial.length === 1) return decided(remaining, 'only_reading');
  if (remaining.length === 1) return decided(remaining, 'field_ranges');

  const get = (order: DateOrder): YearMonthDay[] => readings.get(order) ?? [];

  // Attachment names carry the date the app saved the file, in a fixed Y-M-D order.
  remaining = keepBest(remaining, (order) => {
    const read = get(order);
    return dates.reduce((score, d, i) => {
      const ymd = read[i];
      return d.embedded !== null && ymd && isoDate(ymd) === d.embedded ? score + 1 : score;
    }, 0);
  });
  if (remaining.length === 1) return decided(remaining, 'attachment_names');

  remaining = keepBest(remaining, (order) => -inversions(get(order), dates));
  if (remaining.length === 1) return decided(remaining, 'chronology');

  const latest = options.now ? options.now.getTime() + 86_400_000 : Number.POSITIVE_INFINITY;
  const plausible = remaining.filter((order) =>
    get(order).every((ymd) => {
      const at = Date.UTC(ymd.year, ymd.month - 1, ymd.day);
      return at >= EARLIEST && at <= latest;
    }),
  );
  if (plausible.length === 1) return decided(plausible, 'plausibility');
  if (plausible.length > 1) remaining = plausible;

  const byLanguage = dateOrderForLanguage(options.deviceLanguage);
  if (byLanguage !== null && remaining.includes(byLanguage)) return decided([byLanguage], 'device_language');

  return {
    ok: false,
    reason: 'ambiguous',
    readings: remaining.map((order) => {
      const first = get(order)[0];
      return { order, firstDate: first ? isoDate(first) : '' };
    }),
  };
}

function decided(orders: readonly DateOrder[], evidence: DateOrderEvidence): DateOrderDecision {
  const order = orders[0];
  if (order === undefined) return { ok: false, reason: 'no_valid_reading' };
  return { ok: true, order, evidence };
}

function keepBest(orders: readonly DateOrder[], score: (order: DateOrder) => number): DateOrder[] {
  const scored = orders.map((order) => ({ order, score: score(order) }));
  const best = Math.max(...scored.map((s) => s.score));
  return scored.filter((s) => s.score === best).map((s) => s.order);
}

/** How often a message is dated before the one above it. */
function inversions(read: readonly YearMonthDay[], dates: readonly NumericDate[]): number {
  let count = 0;
  let previous = Number.NEGATIVE_INFINITY;
  read.forEach((ymd, i) => {
    const at = Date.UTC(ymd.year, ymd.month - 1, ymd.day) + (dates[i]?.secondOfDay ?? 0) * 1000;
    if (at < previous) count++;
    previous = at;
  });
  return count;
}
