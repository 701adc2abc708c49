import { describe, expect, it } from 'vitest';
import { parseChatExport } from '../src/index.ts';
import { loadFixtures } from './fixture-files.ts';

const fixtures = loadFixtures();

describe('chat export fixtures (real-world formats, see fixtures/SOURCES.md)', () => {
  it('covers at least 30 formats', () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(30);
  });

  it.each(fixtures.map((f) => [f.name, f] as const))(
    '%s parses to the expected messages',
    (_name, fixture) => {
      const { expected } = fixture;
      const result = parseChatExport(fixture.text, {
        deviceLanguage: expected.device_language_code,
        now: new Date('2026-01-01T00:00:00Z'),
        ...(expected.year_of_last_message === undefined
          ? {}
          : { yearOfLastMessage: expected.year_of_last_message }),
      });
      if (!result.ok) throw new Error(`${result.error}: ${result.detail}`);
      expect(result.format.platform).toBe(expected.platform);
      expect(result.format.dateOrder).toBe(expected.date_order);
      expect(
        result.messages.map((m) => ({
          local_time: m.localTime,
          sender: m.sender,
          text: m.text,
          media: m.media && { file_name: m.media.fileName, kind: m.media.kind },
          system: m.system,
        })),
      ).toEqual(
        expected.messages.map((m) => ({
          local_time: m.local_time,
          sender: m.sender,
          text: m.text,
          media: m.media,
          system: m.system,
        })),
      );
    },
  );
});
