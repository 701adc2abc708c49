import { describe, expect, it } from 'vitest';
import { fromCalendar } from './calendar.ts';

describe('Persian and Islamic dates to Gregorian', () => {
  it.each([
    ['persian', 'AP'],
    ['islamic-umalqura', 'AH'],
  ] as const)('every day from 2008 to 2030 in the %s calendar converts back to itself', (calendar, era) => {
    const format = new Intl.DateTimeFormat(`en-u-ca-${calendar}`, {
      timeZone: 'UTC',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
    });
    const wrong: string[] = [];
    for (let ms = Date.UTC(2008, 0, 1); ms < Date.UTC(2031, 0, 1); ms += 86_400_000) {
      const p = Object.fromEntries(format.formatToParts(ms).map((x) => [x.type, x.value]));
      const g = new Date(ms);
      const back = fromCalendar(era, Number(p.year), Number(p.month), Number(p.day));
      const expected = { year: g.getUTCFullYear(), month: g.getUTCMonth() + 1, day: g.getUTCDate() };
      if (JSON.stringify(back) !== JSON.stringify(expected)) wrong.push(`${p.year}/${p.month}/${p.day}`);
    }
    expect(wrong).toEqual([]);
  });

  it.each([
    ['AP', 1402, 12, 30],
    ['AP', 1399, 7, 31],
    ['AP', 1402, 13, 1],
    ['AH', 1445, 13, 1],
    ['AH', 1445, 8, 31],
  ] as const)('%s %i/%i/%i does not exist', (era, y, m, d) => {
    expect(fromCalendar(era, y, m, d)).toBeNull();
  });
});
