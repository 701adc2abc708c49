import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';

/** The fixture set (see fixtures/SOURCES.md): an export text and its expected messages per format. */
export const fixturesDirectory = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');

const ExpectedMessage = z.object({
  local_time: z.string(),
  utc_time: z.string(),
  sender: z.string().nullable(),
  direction: z.enum(['in', 'out']).nullable(),
  text: z.string(),
  media: z.object({ file_name: z.string().nullable(), kind: z.string() }).nullable(),
  system: z.string().nullable(),
});

export const Fixture = z.object({
  format: z.string(),
  platform: z.enum(['android', 'ios', 'ios_legacy']),
  date_order: z.enum(['DMY', 'MDY', 'YMD']).nullable(),
  device_language_code: z.string(),
  utc_offset_minutes: z.number().int(),
  chat_participants: z.array(z.object({ handle: z.string(), phone_number: z.string() })),
  wa_id: z.string(),
  year_of_last_message: z.number().int().optional(),
  messages: z.array(ExpectedMessage),
});
export type Fixture = z.infer<typeof Fixture>;
export type ExpectedMessage = z.infer<typeof ExpectedMessage>;

export interface LoadedFixture {
  readonly name: string;
  /** The export exactly as stored (BOM and line ends included). */
  readonly text: string;
  readonly expected: Fixture;
}

export function loadFixtures(): LoadedFixture[] {
  return readdirSync(fixturesDirectory)
    .filter((file) => file.endsWith('.json'))
    .sort()
    .map((file) => {
      const name = file.slice(0, -'.json'.length);
      const expected = Fixture.parse(JSON.parse(readFileSync(join(fixturesDirectory, file), 'utf8')));
      const text = readFileSync(join(fixturesDirectory, `${name}.txt`), 'utf8');
      return { name, text, expected };
    });
}
