import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type Inbox, startInboxAsAdmin } from './support/inbox.ts';
import { jpeg, multipart, oggOpus, pdf, png, sha256 } from './support/media-files.ts';

/**
 * The media of an imported chat, end to end: `POST chat_import/` with the export's files stores
 * each through the media service (origin `import`, the importer as its creator), the Message
 * carries `media` and its network-shaped body the file's id and link, `GET media/{id}/` answers
 * the same bytes; an import sent again stores nothing twice; files the media service refuses
 * are warnings; the media service down fails the import before anything is stored.
 *
 * The export lines follow the Android "Export chat" format of the parser's fixture set
 * (`chat-export/test/fixtures`, sources in SOURCES.md): `IMG-….jpg (file attached)` for a
 * photo, `<name>.pdf (file attached)` followed by the caption for a document.
 */

/** Small, so an image over it is refused without a large request. */
const MAX_IMAGE_BYTES = 20_000;

let inbox: Inbox;
let token: string;

beforeAll(
  async () =>
    ({ inbox, admin: token } = await startInboxAsAdmin({
      env: { MEDIA_MAX_IMAGE_BYTES: String(MAX_IMAGE_BYTES) },
    })),
  120_000,
);
afterAll(async () => inbox?.stop());

const StoredMedia = z.object({
  id: z.uuid(),
  file: z.url(),
  mime_type: z.string(),
  size: z.number(),
  sha256: z.string(),
  status: z.literal('stored'),
});
const Message = z.object({
  id: z.string(),
  type: z.string(),
  from_us: z.boolean(),
  waba_payload: z.record(z.string(), z.unknown()),
  media: StoredMedia.nullable(),
});
type Message = z.infer<typeof Message>;

const Warning = z.object({
  line: z.number(),
  file_name: z.string().nullable(),
  code: z.string(),
  reason: z.string(),
});
const ImportAnswer = z.object({ wa_id: z.string(), new_messages: z.number(), warnings: z.array(Warning) });

const b64 = (data: Buffer) => data.toString('base64');

async function importChat(chatText: string, mediaFiles: { name: string; type: string; data: Buffer }[]) {
  return inbox.api('POST', '/api/v1/chat_import/', {
    token,
    body: {
      chat_text: chatText,
      utc_offset_minutes: 60,
      device_language_code: 'en-GB',
      media_files: mediaFiles.map((f) => ({
        file_name: f.name,
        mime_type: f.type,
        b64_content: b64(f.data),
      })),
    },
  });
}

async function imported(chatText: string, mediaFiles: { name: string; type: string; data: Buffer }[]) {
  const res = await importChat(chatText, mediaFiles);
  const body: unknown = await res.json();
  expect(res.status, JSON.stringify(body)).toBe(200);
  return ImportAnswer.parse(body);
}

async function messagesOf(waId: string): Promise<Message[]> {
  const res = await inbox.api('GET', `/api/v1/messages/?wa_id=${waId}&limit=100`, { token });
  expect(res.status).toBe(200);
  return z
    .object({ results: z.array(Message) })
    .parse(await res.json())
    .results.reverse();
}

async function query<R extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: inbox.db.url });
  await client.connect();
  try {
    return (await client.query<R>(text, values)).rows;
  } finally {
    await client.end();
  }
}

async function download(url: string): Promise<Buffer> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}

describe('an export with an image and a PDF', () => {
  const waId = '447700900321';
  const photo = jpeg(6_000);
  const quote = pdf('Quote 118 for the bathroom tiles');
  const chat = [
    '01/07/2024, 10:00 - +44 7700 900321: Here is the crack in the tiles',
    '01/07/2024, 10:01 - +44 7700 900321: IMG-20240701-WA0004.jpg (file attached)',
    '01/07/2024, 10:05 - Harbour Tiles: Thanks, here is our quote',
    '01/07/2024, 10:06 - Harbour Tiles: Quote 118.pdf (file attached)',
    'Quote for the bathroom',
  ];
  const files = [
    { name: 'IMG-20240701-WA0004.jpg', type: 'image/jpeg', data: photo },
    { name: 'Quote 118.pdf', type: 'application/pdf', data: quote },
  ];

  it('stores both files: the messages carry them and the media service answers the same bytes', async () => {
    const answer = await imported(`${chat.join('\n')}\n`, files);
    expect(answer).toMatchObject({ wa_id: waId, new_messages: 4, warnings: [] });

    const stored = await messagesOf(waId);
    expect(stored.map((m) => [m.type, m.from_us])).toEqual([
      ['text', false],
      ['image', false],
      ['text', true],
      ['document', true],
    ]);
    const [, image, , document] = stored;
    expect(image?.media).toMatchObject({
      mime_type: 'image/jpeg',
      size: photo.length,
      sha256: sha256(photo),
    });
    expect(document?.media).toMatchObject({
      mime_type: 'application/pdf',
      size: quote.length,
      sha256: sha256(quote),
    });
    expect(stored[0]?.media).toBeNull();

    for (const [message, bytes] of [
      [image, photo],
      [document, quote],
    ] as const) {
      const media = StoredMedia.parse(message?.media);
      expect(media.file).toBe(`${inbox.url}/api/v1/media/${media.id}/`);
      expect(sha256(await download(media.file))).toBe(sha256(bytes));
      // The network-shaped body carries the inbox file by id and by link, as a send would.
      const content = message?.waba_payload[message.type];
      expect(content).toMatchObject({ id: media.id, link: media.file, sha256: media.sha256 });
      expect(message?.waba_payload).toMatchObject({
        imported: true,
        media: { id: media.id, link: media.file },
      });
    }
    expect(document?.waba_payload.document).toMatchObject({
      caption: 'Quote for the bathroom',
      filename: 'Quote 118.pdf',
    });

    // Recorded as imported files, created by the importing user.
    const ids = [image?.media?.id, document?.media?.id];
    const rows = await query<{ origin: string; created_by: number | null; file_name: string }>(
      'select origin, created_by, file_name from media_files where id = any($1::uuid[]) order by file_name',
      [ids],
    );
    const [admin] = await query<{ id: number }>("select id from users where username = 'admin'");
    expect(rows).toEqual([
      { origin: 'import', created_by: admin?.id, file_name: 'IMG-20240701-WA0004.jpg' },
      { origin: 'import', created_by: admin?.id, file_name: 'Quote 118.pdf' },
    ]);
  });

  it('stores nothing twice when the same export is imported again, or a later one with the same files', async () => {
    const count = async () =>
      Number((await query<{ n: string }>('select count(*) as n from media_files')).at(0)?.n);
    const objects = async () =>
      Number(
        (await query<{ n: string }>('select count(distinct object_key) as n from media_files')).at(0)?.n,
      );
    const before = { files: await count(), objects: await objects() };

    expect(await imported(`${chat.join('\n')}\n`, files)).toMatchObject({ new_messages: 0, warnings: [] });
    const later = [...chat, '02/07/2024, 09:00 - +44 7700 900321: Looks good, go ahead'];
    expect(await imported(`${later.join('\n')}\n`, files)).toMatchObject({ new_messages: 1, warnings: [] });

    expect({ files: await count(), objects: await objects() }).toEqual(before);
    const stored = await messagesOf(waId);
    expect(stored).toHaveLength(5);
    expect(stored.filter((m) => m.media !== null)).toHaveLength(2);
  });
});

describe('an export sent as multipart/form-data', () => {
  it('stores each file part byte for byte, the bytes themselves (no base64 in the request)', async () => {
    const waId = '447700900377';
    const photo = jpeg(7_000);
    const quote = pdf('Quote 119 for the kitchen splashback');
    const form = new FormData();
    form.set(
      'chat_text',
      new Blob([
        [
          '02/07/2024, 09:00 - +44 7700 900377: The splashback, as promised',
          '02/07/2024, 09:01 - +44 7700 900377: IMG-20240702-WA0001.jpg (file attached)',
          '02/07/2024, 09:30 - Harbour Tiles: Quote 119.pdf (file attached)',
          '',
        ].join('\n'),
      ]),
      'WhatsApp Chat with +44 7700 900377.txt',
    );
    form.set('utc_offset_minutes', '60');
    form.set('device_language_code', 'en-GB');
    form.append('media', new Blob([photo], { type: 'image/jpeg' }), 'IMG-20240702-WA0001.jpg');
    form.append('media', new Blob([quote], { type: 'application/pdf' }), 'Quote 119.pdf');
    const res = await fetch(`${inbox.url}/api/v1/chat_import/`, {
      method: 'POST',
      headers: { authorization: `Token ${token}` },
      body: form,
    });
    const body: unknown = await res.json();
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(ImportAnswer.parse(body)).toMatchObject({ wa_id: waId, new_messages: 3, warnings: [] });

    const [, image, document] = await messagesOf(waId);
    for (const [message, bytes] of [
      [image, photo],
      [document, quote],
    ] as const) {
      const media = StoredMedia.parse(message?.media);
      expect([media.size, media.sha256]).toEqual([bytes.length, sha256(bytes)]);
      expect(sha256(await download(media.file))).toBe(sha256(bytes));
    }
  });
});

describe('an export imported first without its files', () => {
  it('gets them when imported again with them: the messages gain their media, nothing is added', async () => {
    const waId = '447700900322';
    const voice = oggOpus;
    const chat = `05/07/2024, 08:00 - +${waId}: PTT-20240705-WA0001.opus (file attached)\n05/07/2024, 08:02 - Harbour Tiles: Noted\n`;
    const first = await imported(chat, []);
    expect(first).toMatchObject({ new_messages: 2, warnings: [{ line: 1, code: 'media_file_missing' }] });
    expect((await messagesOf(waId))[0]).toMatchObject({ type: 'audio', media: null });

    const again = await imported(chat, [
      { name: 'PTT-20240705-WA0001.opus', type: 'audio/ogg', data: voice },
    ]);
    expect(again).toMatchObject({ new_messages: 0, warnings: [] });
    const [note, reply] = await messagesOf(waId);
    const media = StoredMedia.parse(note?.media);
    expect(media).toMatchObject({ mime_type: 'audio/ogg', sha256: sha256(voice) });
    expect(note?.waba_payload.audio).toMatchObject({ id: media.id, link: media.file });
    expect(sha256(await download(media.file))).toBe(sha256(voice));
    expect(reply).toMatchObject({ type: 'text', media: null });
  });
});

describe('files the media service refuses', () => {
  it.each([
    [
      'a PDF declared as a JPEG photo',
      { name: 'IMG-20240703-WA0001.jpg', type: 'image/jpeg', data: pdf('not a photo') },
      'image',
      'unsupported_media_type',
      '447700900401',
    ],
    [
      'a photo over the image limit',
      { name: 'IMG-20240703-WA0002.jpg', type: 'image/jpeg', data: jpeg(MAX_IMAGE_BYTES + 1) },
      'image',
      'payload_too_large',
      '447700900402',
    ],
    [
      'a type the network does not take',
      { name: 'Notes.zip', type: 'application/zip', data: Buffer.from('504b030414000000', 'hex') },
      'document',
      'unsupported_media_type',
      '447700900403',
    ],
    [
      'an empty file',
      { name: 'IMG-20240703-WA0003.jpg', type: 'image/jpeg', data: Buffer.alloc(0) },
      'image',
      'empty',
      '447700900404',
    ],
    [
      'something that is not a MIME type',
      { name: 'IMG-20240703-WA0004.jpg', type: 'a photo', data: jpeg(500) },
      'image',
      'not a MIME type',
      '447700900405',
    ],
  ])(
    '%s: a warning with the reason, the message imported without its file',
    async (_what, file, type, reason, waId) => {
      const chat = [
        `03/07/2024, 11:00 - +${waId}: Sending it now`,
        `03/07/2024, 11:01 - +${waId}: ${file.name} (file attached)`,
      ];
      const answer = await imported(`${chat.join('\n')}\n`, [file]);
      expect(answer.new_messages).toBe(2);
      expect(answer.warnings).toEqual([
        { line: 2, file_name: file.name, code: 'media_not_stored', reason: expect.stringContaining(reason) },
      ]);
      const [, message] = await messagesOf(waId);
      expect(message).toMatchObject({ type, media: null, waba_payload: { media: null, imported: true } });
    },
  );
});

describe('who may store imported files', () => {
  it('refuses origin import from anyone but the gateway, and takes no origin from a client’s upload', async () => {
    const forged = Buffer.from(
      JSON.stringify({ user_id: 1, role: 'admin', at: Date.now(), origin: 'import' }),
    ).toString('base64url');
    const direct = await fetch(`${inbox.mediaUrl}/api/v1/media/?filename=x.png`, {
      method: 'POST',
      headers: {
        'content-type': 'image/png',
        'x-switchboard-uploader': `${forged}.not-the-gateways-signature`,
      },
      body: png,
    });
    expect(direct.status).toBe(403);

    // A client's upload names its origin in vain: it is an upload.
    const form = multipart({ name: 'file_encoded', filename: 'dot.png', type: 'image/png', data: png });
    const res = await fetch(`${inbox.url}/api/v1/media/?origin=import`, {
      method: 'POST',
      headers: { authorization: `Token ${token}`, 'content-type': form.contentType },
      body: form.body,
    });
    expect(res.status).toBe(201);
    const { id } = z.object({ id: z.string() }).parse(await res.json());
    expect(await query('select origin from media_files where id = $1', [id])).toEqual([{ origin: 'upload' }]);
  });
});

describe('the media service down', () => {
  // Runs last: it stops the media service.
  it('fails the whole import with 503 naming it, storing nothing of the chat', async () => {
    const waId = '447700900555';
    await inbox.media.stop();
    const res = await importChat(
      `04/07/2024, 12:00 - +${waId}: Hi\n04/07/2024, 12:01 - +${waId}: IMG-20240704-WA0001.jpg (file attached)\n`,
      [{ name: 'IMG-20240704-WA0001.jpg', type: 'image/jpeg', data: jpeg(800) }],
    );
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ code: 'service_unavailable', dependency: 'media' });
    expect(await query('select id from messages where wa_id = $1', [waId])).toEqual([]);
  });
});
