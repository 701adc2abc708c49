import { describe, expect, it } from 'vitest';
import { dateOrderForLanguage } from './calendar.ts';
import { parseChatExport } from './parse.ts';
import type { ParseResult } from './types.ts';

const ok = (result: ParseResult) => {
  if (!result.ok) throw new Error(`${result.error}: ${result.detail}`);
  return result;
};

describe('bad input is told apart, never guessed', () => {
  it.each([
    ['empty text', ''],
    ['prose', 'Dear team,\nplease find the chat below.\n'],
    ['a date without a time', '12/03/2023 - Ana: hi'],
    ['a CSV', 'date,sender,text\n2023-03-05,Ana,hi'],
    ['a line before the first header', 'Chat with Ana\n12/03/2023, 10:00 - Ana: hi'],
    ['an impossible month on every reading', '31/31/2023, 10:00 - Ana: hi'],
  ])('%s is not an export', (_name, text) => {
    const result = parseChatExport(text, { deviceLanguage: 'en-GB' });
    expect(result).toMatchObject({ ok: false, error: 'not_an_export' });
  });

  it('the year first on some lines and last on others is mixed formats', () => {
    const result = parseChatExport('2023/03/14, 10:00 - Ana: a\n14/03/2023, 10:01 - Ana: b\n');
    expect(result).toMatchObject({ ok: false, error: 'mixed_formats' });
  });

  it('two exports pasted together are mixed formats', () => {
    const android = Array.from({ length: 5 }, (_, i) => `1${i}/03/2023, 10:0${i} - Ana: android ${i}`);
    const ios = Array.from({ length: 5 }, (_, i) => `[1${i}/03/2023, 11:0${i}:00] Ana: ios ${i}`);
    const result = parseChatExport([...android, ...ios].join('\n'), { deviceLanguage: 'en-GB' });
    expect(result).toMatchObject({ ok: false, error: 'mixed_formats', lines: [6, 7, 8, 9, 10] });
  });

  it('one quoted header of another shape inside a message stays part of that message', () => {
    const text = [
      '10/03/2023, 10:00 - Ana: forwarding what Bo wrote:',
      '[10/03/2023, 09:00:00] Bo: see you at nine',
      '10/03/2023, 10:01 - Shop: thanks',
      '11/03/2023, 10:02 - Ana: bye',
      '12/03/2023, 10:03 - Shop: bye',
      '13/03/2023, 10:04 - Shop: hello again',
      '14/03/2023, 10:05 - Shop: and again',
      '15/03/2023, 10:06 - Shop: and again',
      '16/03/2023, 10:07 - Shop: and again',
      '17/03/2023, 10:08 - Shop: and again',
      '18/03/2023, 10:09 - Shop: and again',
    ].join('\n');
    const result = ok(parseChatExport(text, { deviceLanguage: 'en-GB' }));
    expect(result.messages[0]?.text).toBe(
      'forwarding what Bo wrote:\n[10/03/2023, 09:00:00] Bo: see you at nine',
    );
    expect(result.messages).toHaveLength(10);
  });
});

describe('the day/month order is decided once per file', () => {
  const ambiguous = '03/04/2023, 10:00 - Ana: hi\n05/06/2023, 11:00 - Shop: hello\n';

  it('answers ambiguous_date_order with both readings when nothing decides', () => {
    const result = parseChatExport(ambiguous, { deviceLanguage: 'en' });
    expect(result).toEqual({
      ok: false,
      error: 'ambiguous_date_order',
      detail: expect.any(String),
      readings: [
        { order: 'DMY', firstDate: '2023-04-03' },
        { order: 'MDY', firstDate: '2023-03-04' },
      ],
    });
  });

  it.each([
    ['en-US', 'MDY', '2023-03-04T10:00:00'],
    ['en-GB', 'DMY', '2023-04-03T10:00:00'],
    ['pt_BR', 'DMY', '2023-04-03T10:00:00'],
  ])('the device language %s breaks the tie (%s)', (language, order, first) => {
    const result = ok(parseChatExport(ambiguous, { deviceLanguage: language }));
    expect(result.format).toMatchObject({ dateOrder: order, decidedBy: 'device_language' });
    expect(result.messages[0]?.localTime).toBe(first);
  });

  it('a day above 12 anywhere in the file decides for every line', () => {
    const result = ok(
      parseChatExport(`${ambiguous}13/06/2023, 09:00 - Ana: later\n`, { deviceLanguage: 'en-US' }),
    );
    expect(result.format).toMatchObject({ dateOrder: 'DMY', decidedBy: 'field_ranges' });
    expect(result.messages[0]?.localTime).toBe('2023-04-03T10:00:00');
  });

  it('dates in attachment names outweigh the device language', () => {
    const text =
      '03/04/2023, 10:00 - Ana: IMG-20230403-WA0001.jpg (file attached)\n05/06/2023, 11:00 - Shop: ok\n';
    const result = ok(parseChatExport(text, { deviceLanguage: 'en-US' }));
    expect(result.format).toMatchObject({ dateOrder: 'DMY', decidedBy: 'attachment_names' });
  });

  it('chronological order outweighs the device language', () => {
    const text = '01/02/2023, 10:00 - Ana: a\n03/02/2023, 10:00 - Ana: b\n02/03/2023, 10:00 - Ana: c\n';
    const result = ok(parseChatExport(text, { deviceLanguage: 'en-US' }));
    expect(result.format).toMatchObject({ dateOrder: 'DMY', decidedBy: 'chronology' });
  });

  it('dates after now are implausible', () => {
    const text = '03/11/2026, 10:00 - Ana: a\n';
    const result = ok(parseChatExport(text, { deviceLanguage: 'en', now: new Date('2026-04-01T00:00:00Z') }));
    expect(result.format).toMatchObject({ dateOrder: 'MDY', decidedBy: 'plausibility' });
  });

  it.each([
    ['de-AT', 'DMY'],
    ['en-US', 'MDY'],
    ['en', null],
    ['en-CA', null],
    ['ja', 'YMD'],
    ['zh_Hant_TW', 'YMD'],
    [undefined, null],
  ])('language %s reads %s', (code, order) => {
    expect(dateOrderForLanguage(code)).toBe(order);
  });
});

describe('years', () => {
  it.each([
    ['5/3/2566 BE', '2023-03-05'],
    ['5/3/2566', '2023-03-05'],
    ['5/3/R5', '2023-03-05'],
    ['5/3/H30', '2018-03-05'],
    ['5/3/23', '2023-03-05'],
    ['5/3/2023', '2023-03-05'],
  ])('%s is %s', (written, date) => {
    const result = ok(parseChatExport(`${written}, 14:05 - Ana: hi\n`, { deviceLanguage: 'th' }));
    expect(result.messages[0]?.localTime).toBe(`${date}T14:05:00`);
  });

  it.each([
    ['Persian calendar, year first', '1402/12/15', 'fa', '2024-03-05'],
    ['Persian new year', '1403/1/1', 'fa', '2024-03-20'],
    ['Islamic (Umm al-Qura) calendar, day first', '24/8/1445', 'ar-SA', '2024-03-05'],
  ])('%s: %s is %s', (_name, written, language, date) => {
    const result = ok(parseChatExport(`${written}, 14:05 - Ana: hi\n`, { deviceLanguage: language }));
    expect(result.messages[0]?.localTime).toBe(`${date}T14:05:00`);
  });

  it('a day the Persian calendar does not have is not a date', () => {
    // 1402 is not a leap year: Esfand has 29 days.
    const result = parseChatExport('1402/12/30, 14:05 - Ana: hi\n', { deviceLanguage: 'fa' });
    expect(result).toMatchObject({ ok: false, error: 'not_an_export' });
  });
});

describe('times', () => {
  it.each([
    ['12:05 AM', '00:05'],
    ['12:05 PM', '12:05'],
    ['1:05 PM', '13:05'],
    ['11:59 pm', '23:59'],
    ['12:05 a. m.', '00:05'],
    ['2:05 μ.μ.', '14:05'],
    ['2:05 π.μ.', '02:05'],
    ['9:30 م', '21:30'],
    ['9:30 ص', '09:30'],
    ['2:05\u202FPM', '14:05'],
    ['2:05\u2009PM', '14:05'],
  ])('%s is %s', (written, expected) => {
    const result = ok(parseChatExport(`3/14/23, ${written} - Ana: hi\n`, { deviceLanguage: 'en-US' }));
    expect(result.messages[0]?.localTime).toBe(`2023-03-14T${expected}:00`);
  });

  it('rejects hours that do not exist on a 12-hour clock', () => {
    const result = parseChatExport('3/14/23, 13:05 PM - Ana: hi\n', { deviceLanguage: 'en-US' });
    expect(result).toMatchObject({ ok: false, error: 'not_an_export' });
  });
});

describe('senders and lines', () => {
  it('normalises number-shaped senders to digits and keeps names as written', () => {
    const text = [
      '14/03/2023, 10:00 - \u202A+55\u00A061\u00A08121-3457\u202C: oi',
      '14/03/2023, 10:01 - ~\u202FMaría José: hola',
      '14/03/2023, 10:02 - 2nd Street Bakery: hi',
    ].join('\n');
    const result = ok(parseChatExport(text));
    expect(result.messages.map((m) => [m.sender, m.senderNumber])).toEqual([
      ['+55 61 8121-3457', '556181213457'],
      ['María José', null],
      ['2nd Street Bakery', null],
    ]);
  });

  it('handles old Mac line ends, blank lines inside a message and a trailing blank line', () => {
    const result = ok(
      parseChatExport('14/03/2023, 10:00 - Ana: one\r\rthree\r14/03/2023, 10:01 - Ana: two\r\r'),
    );
    expect(result.messages.map((m) => m.text)).toEqual(['one\n\nthree', 'two']);
  });

  it.each([
    ["Ana joined using this group's invite link", 'membership'],
    ['Ana added Bo', 'membership'],
    ['Bo left', 'membership'],
    ['Ana changed to +44 7700 900123', 'number_change'],
    ['Your security code with Ana changed. Tap to learn more.', 'security_code'],
    ['Disappearing messages were turned on.', 'other'],
  ])('a line without a sender "%s" is a %s notice', (line, kind) => {
    const result = ok(parseChatExport(`14/03/2023, 10:00 - ${line}\n`));
    expect(result.messages[0]).toMatchObject({ sender: null, system: kind, text: line });
  });

  it.each([
    ['\u200EThis message was deleted', 'deleted'],
    ['Se eliminó este mensaje.', 'deleted'],
    ['\u200EMissed video call', 'missed_call'],
  ])('"%s" under a sender is a %s notice', (body, kind) => {
    const result = ok(parseChatExport(`14/03/2023, 10:00 - Ana: ${body}\n`));
    expect(result.messages[0]).toMatchObject({ sender: 'Ana', system: kind, media: null });
  });

  it('removes the marker of an edited message and says it was edited', () => {
    const result = ok(
      parseChatExport('14/03/2023, 10:00 - Ana: see you at 5 \u200E<This message was edited>\n'),
    );
    expect(result.messages[0]).toMatchObject({ text: 'see you at 5', edited: true });
  });

  it.each([
    ['<Media omitted>', null, 'unknown', ''],
    ['VID-20230314-WA0002.mp4 (file attached)', 'VID-20230314-WA0002.mp4', 'video', ''],
    ['STK-20230314-WA0003.webp (file attached)', 'STK-20230314-WA0003.webp', 'sticker', ''],
    ['Ana.vcf (file attached)', 'Ana.vcf', 'contact', ''],
    ['AUD-20230314-WA0004. (file attached)', 'AUD-20230314-WA0004.', 'audio', ''],
    ['Menu.pdf (file attached)\nMenu', 'Menu.pdf', 'document', 'Menu'],
  ])('the media line "%s" links file %s (%s)', (body, fileName, kind, text) => {
    const result = ok(parseChatExport(`14/03/2023, 10:00 - Ana: ${body}\n`));
    expect(result.messages[0]).toMatchObject({ media: { fileName, kind }, text, system: null });
  });
});

describe('month names without a year', () => {
  const text =
    'Nov 30, 4:10 PM - Tom Becker: Open tomorrow?\nDec 20, 10:00 PM - Tom Becker: And on the 21st?\n';

  it('put a last message that would lie ahead of the export in the year before', () => {
    const result = ok(
      parseChatExport(text, { now: new Date('2025-02-10T12:00:00Z'), yearOfLastMessage: 2025 }),
    );
    expect(result.messages.map((m) => m.localTime)).toEqual(['2024-11-30T16:10:00', '2024-12-20T22:00:00']);
  });

  it('keep the given year for a last message earlier in it', () => {
    const result = ok(
      parseChatExport(text, { now: new Date('2025-12-24T12:00:00Z'), yearOfLastMessage: 2025 }),
    );
    expect(result.messages.map((m) => m.localTime)).toEqual(['2025-11-30T16:10:00', '2025-12-20T22:00:00']);
  });

  it('refuse a date no calendar has', () => {
    const result = parseChatExport('Feb 31, 9:00 AM - Tom Becker: hi\n', { yearOfLastMessage: 2025 });
    expect(result).toMatchObject({ ok: false, error: 'not_an_export' });
  });
});
