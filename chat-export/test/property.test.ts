import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatLocal, type LocalDateTime, parseChatExport } from '../src/index.ts';
import { type ChatMessage, renderChat, type Sender, STYLES } from './render.ts';

const WORDS = [
  'hello',
  'order',
  'café',
  'ok',
  'Straße',
  'ñandú',
  'привет',
  'مرحبا',
  'こんにちは',
  '👍',
  'a:b',
  'x - y',
  'see: this',
  '(1)',
];

/** Text whose lines cannot be mistaken for headers, placeholders or notices: no line starts with a digit or `[`. */
const line = fc
  .array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 6 })
  .map((words) => words.join(' '));
const text = fc.array(line, { minLength: 1, maxLength: 3 }).map((lines) => lines.join('\n'));

const senders: readonly Sender[] = [
  { name: 'Ana Souza', written: 'Ana Souza' },
  { name: 'Corner Shop', written: 'Corner Shop' },
  { name: '+55 61 8121-3457', written: '\u202A+55\u00A061\u00A08121-3457\u202C' },
  { name: 'Jörg', written: '~\u202FJörg' },
];

function local(ms: number): LocalDateTime {
  const d = new Date(ms);
  return {
    year: d.getUTCFullYear(),
    month: d.getUTCMonth() + 1,
    day: d.getUTCDate(),
    hour: d.getUTCHours(),
    minute: d.getUTCMinutes(),
    second: d.getUTCSeconds(),
  };
}

/**
 * A chat in time order, all before the parser's `now` (exports hold no future dates): it starts
 * by 2021 and its gaps stay under 60 days (so exports without years can be read back too).
 */
function chat(fromYear: number, withSeconds: boolean): fc.Arbitrary<ChatMessage[]> {
  const start = Date.UTC(fromYear, 0, 1);
  return fc
    .record({
      first: fc.integer({ min: 0, max: Date.UTC(2021, 0, 1) - start }),
      steps: fc.array(
        fc.record({
          gap: fc.oneof(fc.integer({ min: 0, max: 3_600 }), fc.integer({ min: 0, max: 59 * 86_400 })),
          sender: fc.constantFrom(...senders),
          text,
          media: fc.option(
            fc.record({ kind: fc.constantFrom('image' as const, 'audio' as const), file: fc.boolean() }),
            {
              freq: 4,
            },
          ),
        }),
        { minLength: 1, maxLength: 25 },
      ),
    })
    .map(({ first, steps }) => {
      let at = start + first;
      return steps.map((step) => {
        at += step.gap * 1000;
        const t = local(withSeconds ? at : at - (at % 60_000));
        return { at: t, sender: step.sender, text: step.text, media: step.media };
      });
    });
}

describe('any chat rendered in a supported format parses back to the same messages', () => {
  it.each(STYLES.map((style) => [style.name, style] as const))('%s', (name, style) => {
    const withSeconds = name.startsWith('ios');
    fc.assert(
      fc.property(chat(style.fromYear, withSeconds), (messages) => {
        const { text: exported, rendered } = renderChat(style, messages);
        const last = messages[messages.length - 1];
        const result = parseChatExport(exported, {
          deviceLanguage: style.deviceLanguage,
          now: new Date('2026-01-01T00:00:00Z'),
          ...(style.noYear && last ? { yearOfLastMessage: last.at.year } : {}),
        });
        if (!result.ok) throw new Error(`${result.error}: ${result.detail}`);
        expect(
          result.messages.map((m) => ({
            at: m.localTime,
            sender: m.sender,
            text: m.text,
            media: m.media,
            system: m.system,
          })),
        ).toEqual(
          messages.map((m, i) => ({
            at: formatLocal(m.at),
            sender: m.sender.name,
            text: rendered[i]?.expectedText,
            media: rendered[i]?.media ?? null,
            system: null,
          })),
        );
      }),
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 60) },
    );
  });
});
