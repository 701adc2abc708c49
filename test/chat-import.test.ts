import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { jetstreamManager } from '@nats-io/jetstream';
import { connectNats } from '@switchboard/kit';
import {
  ImportMediaKindSchema,
  instanceId,
  MESSAGE_TYPE_OF_IMPORT_KIND,
  streamName,
} from '@switchboard/proto';
import { repoRoot, testNatsUrl, waitFor } from '@switchboard/testkit';
import { strToU8, zipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { postRefusedEarly } from './support/api.ts';
import { type Inbox, startInboxAsAdmin } from './support/inbox.ts';

/**
 * `POST /api/v1/chat_import/` end to end: every real-world export format of the parser's fixture
 * set (chat-export/test/fixtures, sources in SOURCES.md) imported through the gateway into chats
 * on real NATS and PostgreSQL, then read back with `GET messages/` and compared message by
 * message (UTC time, direction, type, text, media); re-imports, overlapping exports and every
 * bad input.
 */

const FIXTURES = join(repoRoot, 'chat-export/test/fixtures');
const Fixture = z.object({
  format: z.string(),
  device_language_code: z.string(),
  utc_offset_minutes: z.number().int(),
  chat_participants: z.array(z.object({ handle: z.string(), phone_number: z.string() })),
  wa_id: z.string(),
  year_of_last_message: z.number().int().optional(),
  messages: z.array(
    z.object({
      utc_time: z.string(),
      direction: z.enum(['in', 'out']).nullable(),
      text: z.string(),
      media: z.object({ file_name: z.string().nullable(), kind: ImportMediaKindSchema }).nullable(),
      system: z.string().nullable(),
    }),
  ),
});
const fixtures = readdirSync(FIXTURES)
  .filter((f) => f.endsWith('.json'))
  .sort()
  .map((f) => ({
    expected: Fixture.parse(JSON.parse(readFileSync(join(FIXTURES, f), 'utf8'))),
    text: readFileSync(join(FIXTURES, f.replace(/\.json$/, '.txt')), 'utf8'),
  }));

const Message = z.object({
  id: z.string(),
  type: z.string(),
  from_us: z.boolean(),
  timestamp: z.number(),
  waba_payload: z.record(z.string(), z.unknown()),
});
type Message = z.infer<typeof Message>;

const MAX_BYTES = 1024 * 1024;
let inbox: Inbox;
let token: string;

beforeAll(
  async () =>
    ({ inbox, admin: token } = await startInboxAsAdmin({
      env: { CHAT_IMPORT_MAX_BYTES: String(MAX_BYTES) },
    })),
  120_000,
);
afterAll(async () => inbox?.stop());

/** Messages on the instance's events stream (what the fan-out delivers to per-user webhooks). */
async function eventCount(): Promise<number> {
  const nc = await connectNats(testNatsUrl(), 'chat-import-test');
  try {
    const jsm = await jetstreamManager(nc);
    const info = await jsm.streams.info(streamName(instanceId(inbox.env.INSTANCE_ID ?? ''), 'events'));
    return info.state.messages;
  } finally {
    await nc.drain();
  }
}

async function importChat(body: Record<string, unknown>): Promise<Response> {
  return inbox.api('POST', '/api/v1/chat_import/', { token, body });
}

/** An import the gateway refuses by its Content-Length, before reading the body. */
async function importChatRefusedEarly(body: Record<string, unknown>): Promise<Response> {
  return postRefusedEarly(
    `${inbox.url}/api/v1/chat_import/`,
    { 'content-type': 'application/json', authorization: `Token ${token}` },
    JSON.stringify(body),
  );
}

async function messagesOf(waId: string): Promise<Message[]> {
  const res = await inbox.api('GET', `/api/v1/messages/?wa_id=${waId}&limit=100`, { token });
  expect(res.status).toBe(200);
  const page = z.object({ results: z.array(Message) }).parse(await res.json());
  return page.results.reverse();
}

/** What the API shows of a message, in the fixture's terms. */
function seen(m: Message) {
  const p = m.waba_payload;
  const content = (p[m.type] ?? {}) as { body?: string; caption?: string };
  const textBody = (p.text as { body?: string } | undefined)?.body;
  return {
    utc_time: new Date(m.timestamp * 1000).toISOString().replace('.000Z', 'Z'),
    direction: m.from_us ? 'out' : 'in',
    type: m.type,
    text: m.type === 'text' ? (content.body ?? '') : (content.caption ?? textBody ?? ''),
    file_name: m.type === 'text' ? undefined : (p.file_name ?? null),
    media: m.type === 'text' ? undefined : p.media,
    imported: p.imported,
  };
}

/** Exports without years are read as this year's (at the device's offset): shift the fixture's dates. */
function shiftYears(utc: string, fromYear: number | undefined, offsetMinutes: number): string {
  if (fromYear === undefined) return utc;
  const thisYear = new Date(Date.now() + offsetMinutes * 60_000).getUTCFullYear();
  const d = new Date(utc);
  d.setUTCFullYear(d.getUTCFullYear() + thisYear - fromYear);
  return d.toISOString().replace('.000Z', 'Z');
}

describe('every fixture format imports message by message', () => {
  it.each(fixtures.map((f) => [f.expected.format, f] as const))('%s', async (_name, { expected, text }) => {
    const res = await importChat({
      chat_text: text,
      chat_participants: expected.chat_participants,
      utc_offset_minutes: expected.utc_offset_minutes,
      device_language_code: expected.device_language_code,
      media_files: [],
    });
    const body = (await res.json()) as { wa_id: string; new_messages: number; warnings: unknown[] };
    expect([res.status, body]).toMatchObject([200, { wa_id: expected.wa_id }]);
    const conversation = expected.messages.filter((m) => m.system === null);
    expect(body.new_messages).toBe(conversation.length);
    expect(body.warnings).toHaveLength(conversation.filter((m) => m.media).length);

    const stored = await messagesOf(expected.wa_id);
    expect(stored.map(seen)).toEqual(
      conversation.map((m) => ({
        utc_time: shiftYears(m.utc_time, expected.year_of_last_message, expected.utc_offset_minutes),
        direction: m.direction,
        type: m.media ? MESSAGE_TYPE_OF_IMPORT_KIND[m.media.kind] : 'text',
        text: m.text,
        file_name: m.media ? m.media.file_name : undefined,
        media: m.media ? null : undefined,
        imported: true,
      })),
    );
  });
});

describe('re-imports and overlapping exports', () => {
  const waId = '447700900777';
  const lines = [
    '01/06/2024, 09:00 - +44 7700 900777: Hello, do you have size 9?',
    '01/06/2024, 09:00 - +44 7700 900777: Hello, do you have size 9?',
    '01/06/2024, 09:05 - Northside Shoes: We do, in black',
    '02/06/2024, 10:00 - +44 7700 900777: IMG-20240602-WA0001.jpg (file attached)',
    'This pair?',
    '02/06/2024, 10:01 - Northside Shoes: Yes, that one',
  ];
  const request = (text: string, media: unknown[] = []) => ({
    chat_text: text,
    utc_offset_minutes: 60,
    time_zone: 'Europe/London',
    device_language_code: 'en-GB',
    media_files: media,
  });

  it('adds only what is new, keeps repeated identical lines, and leaves the care window closed', async () => {
    const eventsBefore = await eventCount();
    const first = await importChat(request(`${lines.slice(0, 5).join('\n')}\n`));
    expect(first.status).toBe(200);
    const firstBody = (await first.json()) as Record<string, unknown>;
    expect(firstBody).toMatchObject({
      wa_id: waId,
      new_messages: 4,
      contact: { messaging_window_expires_at: null },
      warnings: [{ line: 4, file_name: 'IMG-20240602-WA0001.jpg', code: 'media_file_missing' }],
    });

    const again = await importChat(request(`${lines.slice(0, 5).join('\n')}\n`));
    expect(await again.json()).toMatchObject({ new_messages: 0 });

    const png = Buffer.from('89504e470d0a1a0a', 'hex').toString('base64');
    const later = await importChat(
      request(`${lines.slice(2).join('\n')}\n`, [
        { b64_content: png, mime_type: 'image/jpeg', file_name: 'IMG-20240602-WA0001.jpg' },
        { b64_content: png, mime_type: 'image/png', file_name: 'unrelated.png' },
      ]),
    );
    expect(await later.json()).toMatchObject({
      new_messages: 1,
      warnings: [
        { line: 2, file_name: 'IMG-20240602-WA0001.jpg', code: 'media_not_stored' },
        { line: 0, file_name: 'unrelated.png', code: 'media_file_unused' },
      ],
    });
    const stored = await messagesOf(waId);
    expect(stored.map((m) => [m.from_us, m.type, seen(m).text])).toEqual([
      [false, 'text', 'Hello, do you have size 9?'],
      [false, 'text', 'Hello, do you have size 9?'],
      [true, 'text', 'We do, in black'],
      [false, 'image', 'This pair?'],
      [true, 'text', 'Yes, that one'],
    ]);
    // British Summer Time: 09:00 in London on 1 June is 08:00 UTC (the IANA zone wins over the offset).
    expect(stored[0]?.timestamp).toBe(Date.UTC(2024, 5, 1, 8, 0) / 1000);
    // Nothing for per-user webhooks: imported history is not a network event.
    expect(await eventCount()).toBe(eventsBefore);
  });

  it('records the import in the event log', async () => {
    const res = await inbox.api('GET', `/api/v1/audit_logs/?action=chat.imported&target_id=${waId}`, {
      token,
    });
    const log = (await res.json()) as { count: number; results: { details: Record<string, unknown> }[] };
    expect(log.count).toBe(3);
    expect(log.results.map((r) => r.details.new_messages)).toEqual([1, 0, 4]);
  });
});

describe('a long export, sent to chats in several parts', () => {
  const waId = '447700900888';
  // One message a minute from 1 June 2024, 00:00; every third is the business's.
  const line = (i: number) => {
    const at = new Date(Date.UTC(2024, 5, 1) + i * 60_000);
    const date = `${String(at.getUTCDate()).padStart(2, '0')}/${String(at.getUTCMonth() + 1).padStart(2, '0')}/${at.getUTCFullYear()}`;
    const time = `${String(at.getUTCHours()).padStart(2, '0')}:${String(at.getUTCMinutes()).padStart(2, '0')}`;
    return `${date}, ${time} - ${i % 3 === 2 ? 'Northside Shoes' : '+44 7700 900888'}: m${i}`;
  };
  const exportOf = (from: number, to: number) =>
    `${Array.from({ length: to - from }, (_, k) => line(from + k)).join('\n')}\n`;
  const request = (text: string) => ({
    chat_text: text,
    utc_offset_minutes: 0,
    device_language_code: 'en-GB',
    media_files: [],
  });

  it('counts every message once, keeps their order, and a later overlapping export adds only the new ones', async () => {
    // 21,000 messages under the 1 MB body limit: more parts than go to chats at once.
    const first = await importChat(request(exportOf(0, 21_000)));
    expect([first.status, await first.json()]).toMatchObject([200, { wa_id: waId, new_messages: 21_000 }]);

    const later = await importChat(request(exportOf(15_000, 22_000)));
    expect([later.status, await later.json()]).toMatchObject([200, { new_messages: 1_000 }]);

    const stored = await messagesOf(waId);
    expect(stored.map((m) => seen(m).text)).toEqual(Array.from({ length: 100 }, (_, k) => `m${21_900 + k}`));
    expect(stored.map((m) => m.from_us)).toEqual(
      Array.from({ length: 100 }, (_, k) => (21_900 + k) % 3 === 2),
    );

    const res = await inbox.api('GET', `/api/v1/audit_logs/?action=chat.imported&target_id=${waId}`, {
      token,
    });
    const log = (await res.json()) as { results: { details: Record<string, unknown> }[] };
    expect(log.results.map((r) => r.details.new_messages)).toEqual([1_000, 21_000]);
  }, 60_000);
});

describe('imported history is read', () => {
  it('counts no imported customer message as new; a message the customer sends afterwards is', async () => {
    const waId = '447700900555';
    const res = await importChat({
      chat_text:
        '01/06/2024, 09:00 - +44 7700 900555: Are you open on Sunday?\n01/06/2024, 09:02 - +44 7700 900555: Hello?\n',
      utc_offset_minutes: 60,
      device_language_code: 'en-GB',
      media_files: [],
    });
    expect([res.status, await res.json()]).toMatchObject([200, { wa_id: waId, new_messages: 2 }]);
    const chat = async () =>
      (await (await inbox.api('GET', `/api/v1/chats/${waId}/`, { token })).json()) as Record<string, unknown>;
    const unreadChats = async () => {
      const list = await inbox.api('GET', '/api/v1/chats/?unread=true&limit=100', { token });
      return ((await list.json()) as { results: { wa_id: string }[] }).results.map((c) => c.wa_id);
    };
    expect(await chat()).toMatchObject({ wa_id: waId, new_messages: 0 });
    expect(await unreadChats()).not.toContain(waId);

    await inbox.customerSays(waId, { type: 'text', text: { body: 'Anyone there?' } });
    await waitFor(
      async () => (await chat()).new_messages === 1,
      20_000,
      'the customer message counted as new',
    );
    expect(await unreadChats()).toContain(waId);
  });
});

describe('text PostgreSQL cannot store', () => {
  it.each([
    ['U+0000', 'nul \u0000 here'],
    ['an unpaired surrogate', 'a lone \ud800 here'],
  ])('%s in the text is refused like in every inbox body (400 validation_error)', async (_name, text) => {
    const res = await importChat({
      chat_text: `01/06/2024, 09:00 - +44 7700 900444: ${text}\n`,
      utc_offset_minutes: 60,
      device_language_code: 'en-GB',
      media_files: [],
    });
    expect([res.status, ((await res.json()) as { code: string }).code]).toEqual([400, 'validation_error']);
  });
});

describe('bad input answers a clear 4xx', () => {
  const valid = {
    chat_text: '01/06/2024, 09:00 - +44 7700 900888: Hello\n',
    utc_offset_minutes: 60,
    device_language_code: 'en-GB',
    media_files: [],
  };
  const android = Array.from({ length: 4 }, (_, i) => `1${i}/06/2024, 09:0${i} - +44 7700 900888: a${i}`);
  const ios = Array.from({ length: 4 }, (_, i) => `[1${i}/06/2024, 10:0${i}:00] +44 7700 900888: b${i}`);

  it.each([
    ['not an export', { chat_text: 'Dear shop, here is our chat.' }, 400, 'not_a_chat_export'],
    [
      'two formats pasted together',
      { chat_text: [...android, ...ios].join('\n') },
      400,
      'mixed_chat_formats',
    ],
    [
      'a group chat',
      {
        chat_text:
          '01/06/2024, 09:00 - +44 7700 900888: hi\n01/06/2024, 09:01 - +44 7700 900999: hi\n01/06/2024, 09:02 - Shop: hi\n',
      },
      400,
      'too_many_chat_participants',
    ],
    [
      'three participants given',
      {
        chat_participants: [
          { handle: 'A', phone_number: '+44 7700 900111' },
          { handle: 'B', phone_number: '+44 7700 900222' },
          { handle: 'C', phone_number: '+44 7700 900333' },
        ],
      },
      400,
      'too_many_chat_participants',
    ],
    [
      'a saved contact without chat_participants',
      { chat_text: '01/06/2024, 09:00 - Jane: Hello\n01/06/2024, 09:01 - Shop: Hi\n' },
      400,
      'chat_customer_unknown',
    ],
    [
      'a participant the export does not name',
      {
        chat_participants: [{ handle: 'Somebody Else', phone_number: '+44 7700 900123' }],
        chat_text: '01/06/2024, 09:00 - Jane: Hello\n',
      },
      400,
      'chat_customer_unknown',
    ],
    [
      'base64 that does not decode',
      { media_files: [{ b64_content: 'not base64!', mime_type: 'image/jpeg', file_name: 'a.jpg' }] },
      400,
      'invalid_base64',
    ],
    [
      'two media files with the same name',
      {
        media_files: [
          { b64_content: 'aGVsbG8=', mime_type: 'image/jpeg', file_name: 'IMG-1.jpg' },
          { b64_content: 'b3RoZXI=', mime_type: 'image/jpeg', file_name: 'IMG-1.jpg' },
        ],
      },
      400,
      'validation_error',
    ],
    ['an unknown time zone', { time_zone: 'Mars/Olympus' }, 400, 'validation_error'],
    ['no language', { device_language_code: undefined }, 400, 'validation_error'],
    [
      'a request above the limit',
      { chat_text: `${valid.chat_text}${'x'.repeat(MAX_BYTES)}` },
      413,
      'payload_too_large',
    ],
  ])('%s', async (_name, change, status, code) => {
    const res = await (status === 413 ? importChatRefusedEarly : importChat)({ ...valid, ...change });
    expect([res.status, ((await res.json()) as { code: string }).code]).toEqual([status, code]);
  });

  it('ambiguous dates answer both readings with their first dates', async () => {
    const res = await importChat({
      ...valid,
      chat_text: '03/04/2024, 09:00 - +44 7700 900888: a\n05/06/2024, 09:00 - +44 7700 900888: b\n',
      device_language_code: 'en',
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      code: 'ambiguous_date_order',
      readings: [
        { order: 'DMY', first_date: '2024-04-03' },
        { order: 'MDY', first_date: '2024-03-04' },
      ],
    });
  });
});

describe('multipart requests', () => {
  it('take chat_text and the media as file parts and the rest as fields', async () => {
    const form = new FormData();
    form.set(
      'chat_text',
      new Blob([
        '05/06/2024, 18:00 - Tom Reed: Photo of the leak\n05/06/2024, 18:01 - Tom Reed: IMG-20240605-WA0003.jpg (file attached)\n05/06/2024, 18:10 - Plumb & Co: On our way\n',
      ]),
      'WhatsApp Chat with Tom Reed.txt',
    );
    form.set('chat_participants', JSON.stringify([{ handle: 'Tom Reed', phone_number: '+44 7700 900555' }]));
    form.set('utc_offset_minutes', '60');
    form.set('device_language_code', 'en-GB');
    form.append(
      'media',
      new Blob([Buffer.from('ffd8ffe0', 'hex')], { type: 'image/jpeg' }),
      'IMG-20240605-WA0003.jpg',
    );
    const res = await fetch(`${inbox.url}/api/v1/chat_import/`, {
      method: 'POST',
      headers: { authorization: `Token ${token}` },
      body: form,
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      wa_id: '447700900555',
      new_messages: 3,
      // The JPEG is stored in the media service (test/chat-import-media.test.ts).
      warnings: [],
    });
  });

  it('refuses a message longer than WhatsApp allows, naming its line (400)', async () => {
    const res = await importChat({
      chat_text: `05/06/2024, 18:00 - +44 7700 900560: hi\n05/06/2024, 18:01 - +44 7700 900560: ${'x'.repeat(70_000)}\n`,
      utc_offset_minutes: 60,
      device_language_code: 'en-GB',
    });
    const answer = (await res.json()) as { code: string; fields?: Record<string, string[]> };
    expect([res.status, answer.code]).toEqual([400, 'validation_error']);
    expect(answer.fields?.chat_text?.[0]).toMatch(/line\(s\) 2\./);
  });

  it('refuses a multipart request without the required fields', async () => {
    const form = new FormData();
    form.set('chat_text', '05/06/2024, 18:00 - +44 7700 900555: hi\n');
    const res = await fetch(`${inbox.url}/api/v1/chat_import/`, {
      method: 'POST',
      headers: { authorization: `Token ${token}` },
      body: form,
    });
    expect([res.status, ((await res.json()) as { code: string }).code]).toEqual([400, 'validation_error']);
  });

  const postForm = (form: FormData) =>
    fetch(`${inbox.url}/api/v1/chat_import/`, {
      method: 'POST',
      headers: { authorization: `Token ${token}` },
      body: form,
    });

  it('refuses an empty utc_offset_minutes like a missing one (not as UTC)', async () => {
    const form = new FormData();
    form.set('chat_text', '05/06/2024, 18:00 - +44 7700 900557: hi\n');
    form.set('utc_offset_minutes', '');
    const res = await postForm(form);
    const answer = (await res.json()) as { code: string; fields?: Record<string, string[]> };
    expect([res.status, answer.code]).toEqual([400, 'validation_error']);
    expect(Object.keys(answer.fields ?? {})).toContain('utc_offset_minutes');
  });

  it('refuses a chat_text field longer in bytes than the limit (413), never imports it cut short', async () => {
    // Two bytes a letter: fewer characters than the limit, more bytes.
    const line = '05/06/2024, 18:00 - +44 7700 900558: مرحبا مرحبا مرحبا مرحبا\n';
    const form = new FormData();
    form.set('chat_text', line.repeat(Math.ceil((MAX_BYTES * 1.1) / Buffer.byteLength(line))));
    form.set('utc_offset_minutes', '60');
    const res = await postForm(form);
    expect([res.status, ((await res.json()) as { code: string }).code]).toEqual([413, 'payload_too_large']);
  });

  it('takes an export with more than a thousand files', async () => {
    const form = new FormData();
    form.set('chat_text', '05/06/2024, 18:00 - +44 7700 900559: so many stickers\n');
    form.set('utc_offset_minutes', '60');
    form.set('device_language_code', 'en-GB');
    for (let i = 0; i < 1_050; i++) {
      form.append(
        'media',
        new Blob([Buffer.from('52494646', 'hex')], { type: 'image/webp' }),
        `STK-${i}.webp`,
      );
    }
    const res = await postForm(form);
    expect(res.status, await res.clone().text()).toBe(200);
  });

  describe('a body that is not well-formed multipart answers 400, never 500', () => {
    const boundary = 'chat-import-boundary';
    const chatFile =
      `--${boundary}\r\nContent-Disposition: form-data; name="chat_text"; filename="_chat.txt"\r\n` +
      'Content-Type: text/plain\r\n\r\n05/06/2024, 18:00 - +44 7700 900556: Is the shop open?\n\r\n';
    const fields =
      `--${boundary}\r\nContent-Disposition: form-data; name="utc_offset_minutes"\r\n\r\n60\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="device_language_code"\r\n\r\nen-GB\r\n`;
    const whole = `${chatFile}${fields}--${boundary}--\r\n`;
    const withBoundary = `multipart/form-data; boundary=${boundary}`;
    /** `body` as is, with the given Content-Type. */
    const rawImport = (contentType: string, body: string) =>
      fetch(`${inbox.url}/api/v1/chat_import/`, {
        method: 'POST',
        headers: { authorization: `Token ${token}`, 'content-type': contentType },
        body,
      });

    it('the same parts, well-formed, import', async () => {
      const res = await rawImport(withBoundary, whole);
      expect([res.status, await res.json()]).toMatchObject([200, { wa_id: '447700900556' }]);
    });

    it.each([
      ['without a boundary', 'multipart/form-data', whole],
      ['cut inside a file part', withBoundary, chatFile.slice(0, -20)],
      ['cut before the closing boundary', withBoundary, `${chatFile}${fields}`],
      ['that is not multipart at all', withBoundary, 'no parts here at all'],
    ])('%s', async (_what, contentType, body) => {
      const res = await rawImport(contentType, body);
      expect([res.status, ((await res.json()) as { code: string }).code]).toEqual([400, 'validation_error']);
    });
  });
});

describe('npm run import-chat', () => {
  it('imports the .zip an iPhone shares (chat text plus media), with progress on stderr', async () => {
    const chat = [
      '[01/06/2024, 09:00:00] Maria Lopes: Olá! The blue vase, is it still there?',
      '\u200E[01/06/2024, 09:01:10] Maria Lopes: \u200E<attached: 00000002-PHOTO-2024-06-01-09-01-10.jpg>',
      '[01/06/2024, 09:05:00] Studio Cerâmica: Yes, until Friday',
    ].join('\r\n');
    const zip = zipSync({
      '_chat.txt': strToU8(`${chat}\r\n`),
      '00000002-PHOTO-2024-06-01-09-01-10.jpg': Buffer.from('ffd8ffe000104a464946', 'hex'),
    });
    const dir = mkdtempSync(join(tmpdir(), 'import-chat-'));
    const path = join(dir, 'WhatsApp Chat - Maria Lopes.zip');
    writeFileSync(path, zip);
    const { stdout, stderr } = await promisify(execFile)(
      process.execPath,
      [
        join(repoRoot, 'scripts/import-chat.ts'),
        path,
        '--url',
        inbox.url,
        '--token',
        token,
        '--wa-id',
        '351912345678',
        '--handle',
        'Maria Lopes',
        '--utc-offset=+01:00',
        '--lang',
        'pt-PT',
      ],
      { cwd: repoRoot },
    );
    expect(stderr).toContain('uploaded');
    expect(JSON.parse(stdout)).toEqual({
      wa_id: '351912345678',
      new_messages: 3,
      // The photo from the .zip is stored in the media service.
      warnings: [],
    });
    expect((await messagesOf('351912345678')).map((m) => [m.type, m.from_us])).toEqual([
      ['text', false],
      ['image', false],
      ['text', true],
    ]);
  });
});
