import type { DateOrder } from './types.ts';

/**
 * Month names as older Android exports wrote them (`Feb 5, 12:45 PM`, `5. Feb., 12:45`), per
 * language. Abbreviations are matched with or without their trailing dot.
 */
const MONTHS: Readonly<Record<string, readonly (readonly string[])[]>> = {
  en: [
    ['january', 'jan'],
    ['february', 'feb'],
    ['march', 'mar'],
    ['april', 'apr'],
    ['may'],
    ['june', 'jun'],
    ['july', 'jul'],
    ['august', 'aug'],
    ['september', 'sept', 'sep'],
    ['october', 'oct'],
    ['november', 'nov'],
    ['december', 'dec'],
  ],
  de: [
    ['januar', 'jan'],
    ['februar', 'feb'],
    ['märz', 'mär', 'mrz'],
    ['april', 'apr'],
    ['mai'],
    ['juni', 'jun'],
    ['juli', 'jul'],
    ['august', 'aug'],
    ['september', 'sept', 'sep'],
    ['oktober', 'okt'],
    ['november', 'nov'],
    ['dezember', 'dez'],
  ],
  es: [
    ['enero', 'ene'],
    ['febrero', 'feb'],
    ['marzo', 'mar'],
    ['abril', 'abr'],
    ['mayo', 'may'],
    ['junio', 'jun'],
    ['julio', 'jul'],
    ['agosto', 'ago'],
    ['septiembre', 'setiembre', 'sept', 'sep', 'set'],
    ['octubre', 'oct'],
    ['noviembre', 'nov'],
    ['diciembre', 'dic'],
  ],
  fr: [
    ['janvier', 'janv'],
    ['février', 'févr', 'fév'],
    ['mars'],
    ['avril', 'avr'],
    ['mai'],
    ['juin'],
    ['juillet', 'juil'],
    ['août'],
    ['septembre', 'sept'],
    ['octobre', 'oct'],
    ['novembre', 'nov'],
    ['décembre', 'déc'],
  ],
  pt: [
    ['janeiro', 'jan'],
    ['fevereiro', 'fev'],
    ['março', 'mar'],
    ['abril', 'abr'],
    ['maio', 'mai'],
    ['junho', 'jun'],
    ['julho', 'jul'],
    ['agosto', 'ago'],
    ['setembro', 'set'],
    ['outubro', 'out'],
    ['novembro', 'nov'],
    ['dezembro', 'dez'],
  ],
  it: [
    ['gennaio', 'gen'],
    ['febbraio', 'feb'],
    ['marzo', 'mar'],
    ['aprile', 'apr'],
    ['maggio', 'mag'],
    ['giugno', 'giu'],
    ['luglio', 'lug'],
    ['agosto', 'ago'],
    ['settembre', 'set'],
    ['ottobre', 'ott'],
    ['novembre', 'nov'],
    ['dicembre', 'dic'],
  ],
  nl: [
    ['januari', 'jan'],
    ['februari', 'feb'],
    ['maart', 'mrt'],
    ['april', 'apr'],
    ['mei'],
    ['juni', 'jun'],
    ['juli', 'jul'],
    ['augustus', 'aug'],
    ['september', 'sep'],
    ['oktober', 'okt'],
    ['november', 'nov'],
    ['december', 'dec'],
  ],
};

const MONTH_BY_NAME: ReadonlyMap<string, number> = (() => {
  const map = new Map<string, number>();
  for (const months of Object.values(MONTHS)) {
    months.forEach((names, index) => {
      for (const name of names) map.set(name, index + 1);
    });
  }
  return map;
})();

/** Regex alternation of every month name, longest first so `sept` wins over `sep`. */
export const MONTH_NAME_PATTERN = [...MONTH_BY_NAME.keys()]
  .sort((a, b) => b.length - a.length)
  .map((name) => name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
  .join('|');

export function monthFromName(name: string): number | null {
  return MONTH_BY_NAME.get(name.toLowerCase().replace(/\.$/, '')) ?? null;
}

/**
 * A date field as written: plain digits, Buddhist era (`2565 BE`, 543 years ahead), or a
 * Japanese era (`R4` Reiwa from 2019, `H30` Heisei from 1989).
 */
export interface DateField {
  readonly value: number;
  readonly digits: number;
  /** True when the field can only be a year (3+ digits or an era marker). */
  readonly isYear: boolean;
  /**
   * `BE` Buddhist, `R`/`H` Japanese eras; `AP` a Persian (Solar Hijri) and `AH` an Islamic
   * (Umm al-Qura) year, told by their range: phones set to those calendars write whole dates in them.
   */
  readonly era: 'BE' | 'R' | 'H' | 'AP' | 'AH' | null;
}

/** Persian years of the app's lifetime (1387 AP is 2008) and Islamic ones (1430 AH is 2009). */
const PERSIAN_YEARS = { from: 1380, to: 1425 };
const ISLAMIC_YEARS = { from: 1425, to: 1480 };

export function readDateField(raw: string): DateField | null {
  const text = raw.trim();
  const japanese = /^([RHrh])(\d{1,2})$/.exec(text);
  if (japanese) {
    const era = (japanese[1] ?? 'R').toUpperCase() as 'R' | 'H';
    return { value: Number(japanese[2]), digits: 2, isYear: true, era };
  }
  const buddhist = /^(\d{4}) ?BE$/i.exec(text);
  if (buddhist) return { value: Number(buddhist[1]), digits: 4, isYear: true, era: 'BE' };
  if (!/^\d{1,4}$/.test(text)) return null;
  const value = Number(text);
  const era =
    text.length === 4 && value >= PERSIAN_YEARS.from && value < PERSIAN_YEARS.to
      ? 'AP'
      : text.length === 4 && value >= ISLAMIC_YEARS.from && value < ISLAMIC_YEARS.to
        ? 'AH'
        : null;
  return { value, digits: text.length, isYear: text.length >= 3, era };
}

/**
 * Thai devices write Buddhist-era years without the `BE` marker (`5/3/2566`): a four-digit year
 * beyond this can only be one (BE 2552 is 2009, when the app appeared).
 */
const UNMARKED_BUDDHIST_FROM = 2500;

/** The Gregorian year a year field stands for (two-digit years are 20xx: the app appeared in 2009). */
export function gregorianYear(field: DateField): number {
  switch (field.era) {
    case 'BE':
      return field.value - 543;
    case 'R':
      return 2018 + field.value;
    case 'H':
      return 1988 + field.value;
    case 'AP':
      return field.value + 621;
    case 'AH':
      return Math.round(field.value * 0.970229 + 621.5643);
    default:
      if (field.digits <= 2) return 2000 + field.value;
      return field.value >= UNMARKED_BUDDHIST_FROM ? field.value - 543 : field.value;
  }
}

const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

export function daysInMonth(year: number, month: number): number {
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return month === 2 && leap ? 29 : (DAYS[month - 1] ?? 0);
}

export function isValidDate(year: number, month: number, day: number): boolean {
  return month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month);
}

/**
 * The order a device language most likely writes numeric dates in, or null when the language
 * alone does not say (English without a region is used with both M/D/Y and D/M/Y).
 */
export function dateOrderForLanguage(code: string | undefined): DateOrder | null {
  if (!code) return null;
  const [language = '', region = ''] = code.replace('_', '-').toLowerCase().split('-');
  if (language === 'en') {
    if (['us', 'ph', 'pr', 'um', 'vi', 'as', 'gu', 'mp'].includes(region)) return 'MDY';
    if (region === '' || region === 'ca') return null;
    return 'DMY';
  }
  if (language === 'es' && region === 'us') return 'MDY';
  if (language === 'fil' || language === 'tl') return 'MDY';
  if (['zh', 'ja', 'ko', 'hu', 'lt', 'mn', 'fa', 'sv', 'eu'].includes(language)) return 'YMD';
  if (language === 'fr' && region === 'ca') return 'YMD';
  return language.length >= 2 ? 'DMY' : null;
}

type LunarSolarCalendar = 'persian' | 'islamic-umalqura';
const FORMATS = new Map<LunarSolarCalendar, Intl.DateTimeFormat>();
const CONVERTED = new Map<string, { year: number; month: number; day: number } | null>();
const DAY_MS = 86_400_000;

function inCalendar(calendar: LunarSolarCalendar, ms: number): [number, number, number] {
  let format = FORMATS.get(calendar);
  if (!format) {
    format = new Intl.DateTimeFormat(`en-u-ca-${calendar}`, {
      timeZone: 'UTC',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
    });
    FORMATS.set(calendar, format);
  }
  const parts = Object.fromEntries(format.formatToParts(ms).map((p) => [p.type, p.value]));
  return [Number(parts.year), Number(parts.month), Number(parts.day)];
}

/**
 * A Persian (`AP`) or Islamic (`AH`) date as a Gregorian one, or null when no such day exists:
 * found from an estimate, then day by day, until the calendar (ICU's, through Intl) writes that
 * very date. Each distinct date is converted once.
 */
export function fromCalendar(
  era: 'AP' | 'AH',
  year: number,
  month: number,
  day: number,
): { year: number; month: number; day: number } | null {
  const key = `${era}${year}-${month}-${day}`;
  const known = CONVERTED.get(key);
  if (known !== undefined) return known;
  let result: { year: number; month: number; day: number } | null = null;
  if (month >= 1 && month <= 12 && day >= 1 && day <= 31) {
    const calendar: LunarSolarCalendar = era === 'AP' ? 'persian' : 'islamic-umalqura';
    const yearDays = era === 'AP' ? 365.2422 : 354.367;
    const epoch = era === 'AP' ? Date.UTC(622, 2, 22) : Date.UTC(622, 6, 16);
    let ms = epoch + Math.round(((year - 1) * yearDays + (month - 1) * (yearDays / 12) + (day - 1)) * DAY_MS);
    // Coarse: jump by the estimated distance (months of unequal length leave a few days off).
    for (let step = 0; step < 3; step++) {
      const [y, m, d] = inCalendar(calendar, ms);
      ms += Math.round((year - y) * yearDays + (month - m) * (yearDays / 12) + (day - d)) * DAY_MS;
    }
    // Fine: walk day by day towards the date; stepping over it means the calendar has no such day.
    const target = year * 10_000 + month * 100 + day;
    let direction = 0;
    for (let step = 0; step < 90; step++) {
      const [y, m, d] = inCalendar(calendar, ms);
      const at = y * 10_000 + m * 100 + d;
      if (at === target) {
        const g = new Date(ms);
        result = { year: g.getUTCFullYear(), month: g.getUTCMonth() + 1, day: g.getUTCDate() };
        break;
      }
      const next = at < target ? 1 : -1;
      if (direction !== 0 && next !== direction) break;
      direction = next;
      ms += next * DAY_MS;
    }
  }
  CONVERTED.set(key, result);
  return result;
}
