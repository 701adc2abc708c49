import { request } from 'node:http';
import { jetstreamManager } from '@nats-io/jetstream';
import { connectNats } from '@switchboard/kit';
import { mediaStreamName } from '@switchboard/media';
import { instanceId, type MediaFile, MediaFileSchema } from '@switchboard/proto';
import { testNatsUrl, waitFor } from '@switchboard/testkit';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Inbox, startInboxAsAdmin } from './support/inbox.ts';
import { docx, jpeg, multipart, oggOpus, pdf, png, sha256 } from './support/media-files.ts';

let inbox: Inbox;
let admin: string;

beforeAll(async () => ({ inbox, admin } = await startInboxAsAdmin()));
afterAll(async () => inbox?.stop());

async function upload(
  data: Buffer,
  type: string,
  opts: { filename?: string; part?: string; raw?: boolean; token?: string } = {},
): Promise<Response> {
  const headers: Record<string, string> = { authorization: `Token ${opts.token ?? admin}` };
  if (opts.raw) {
    const q = opts.filename ? `?filename=${encodeURIComponent(opts.filename)}` : '';
    return fetch(`${inbox.url}/api/v1/media/${q}`, {
      method: 'POST',
      headers: { ...headers, 'content-type': type },
      body: data,
    });
  }
  const form = multipart({
    name: opts.part ?? 'file_encoded',
    filename: opts.filename ?? 'file',
    type,
    data,
  });
  return fetch(`${inbox.url}/api/v1/media/`, {
    method: 'POST',
    headers: { ...headers, 'content-type': form.contentType },
    body: form.body,
  });
}

/** The count a `select count(…) as n` answers in the inbox's database. */
async function countOf(text: string, values: unknown[] = [], of: Inbox = inbox): Promise<number> {
  const client = new pg.Client({ connectionString: of.db.url });
  await client.connect();
  try {
    return Number((await client.query<{ n: string }>(text, values)).rows[0]?.n);
  } finally {
    await client.end();
  }
}

/** A body sent as is, with the given Content-Type (for malformed multipart). */
function rawUpload(contentType: string, body: Buffer): Promise<Response> {
  return fetch(`${inbox.url}/api/v1/media/`, {
    method: 'POST',
    headers: { authorization: `Token ${admin}`, 'content-type': contentType },
    body,
  });
}

async function uploaded(data: Buffer, type: string, filename?: string): Promise<MediaFile> {
  const res = await upload(data, type, filename === undefined ? {} : { filename });
  expect(res.status, await res.clone().text()).toBe(201);
  return MediaFileSchema.parse(await res.json());
}

describe('media upload and retrieval', () => {
  it('stores a multipart upload and serves the same bytes with their headers', async () => {
    const file = await uploaded(png, 'image/png', 'dot.png');
    expect(file).toMatchObject({ mime_type: 'image/png', size: png.length, sha256: sha256(png) });
    expect(file.file).toBe(`${inbox.url}/api/v1/media/${file.id}/`);

    const res = await fetch(file.file);
    expect(res.status).toBe(200);
    expect(sha256(Buffer.from(await res.arrayBuffer()))).toBe(sha256(png));
    expect(res.headers.get('content-type')).toBe('image/png');
    expect(res.headers.get('content-length')).toBe(String(png.length));
    expect(res.headers.get('etag')).toBe(`"${sha256(png)}"`);
    expect(res.headers.get('cache-control')).toBe('private, max-age=31536000, immutable');
    expect(res.headers.get('content-disposition')).toContain('filename="dot.png"');
  });

  it('undoes a raw upload whose client goes away before the end: no chunks left, no row', async () => {
    const nc = await connectNats(testNatsUrl(), 'media-abort-test');
    const jsm = await jetstreamManager(nc);
    const stream = mediaStreamName(instanceId(inbox.env.INSTANCE_ID ?? ''));
    const stored = async () => (await jsm.streams.info(stream)).state.messages;
    // The bucket exists once anything was stored.
    await uploaded(jpeg(1024), 'image/jpeg');
    const before = await stored();
    const rows = () => countOf('select count(*) as n from media_files');
    const rowsBefore = await rows();
    const doc = pdf('x'.repeat(1_500_000));
    const url = new URL(`${inbox.url}/api/v1/media/`);
    await new Promise<void>((resolve, reject) => {
      const req = request(url, {
        method: 'POST',
        headers: {
          authorization: `Token ${admin}`,
          'content-type': 'application/pdf',
          'content-length': String(3 * doc.length),
        },
      });
      req.on('error', () => resolve());
      req.on('response', () => reject(new Error('answered an upload that never ended')));
      // A third of what it declared; once some of it is stored, the client goes away.
      req.write(doc);
      waitFor(async () => (await stored()) > before, 10_000, 'the first chunks stored').then(
        () => req.destroy(),
        reject,
      );
    });
    await waitFor(async () => (await stored()) === before, 10_000, 'the partial chunks removed');
    expect(await rows()).toBe(rowsBefore);
    await nc.close();
  });

  it('stores a file followed by more parts than the parser reads, and answers its id', async () => {
    const boundary = 'extra-parts';
    const part = (name: string, filename: string, type: string, data: Buffer) =>
      Buffer.concat([
        Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="${name}"; filename="${filename}"\r\n` +
            `Content-Type: ${type}\r\n\r\n`,
        ),
        data,
        Buffer.from('\r\n'),
      ]);
    const bytes = jpeg(3000);
    const body = Buffer.concat([
      part('file_encoded', 'first.jpg', 'image/jpeg', bytes),
      ...Array.from({ length: 6 }, (_, i) => part(`extra${i}`, `x${i}.png`, 'image/png', png)),
      Buffer.from(`--${boundary}--\r\n`),
    ]);
    const res = await rawUpload(`multipart/form-data; boundary=${boundary}`, body);
    expect(res.status, await res.clone().text()).toBe(201);
    const file = MediaFileSchema.parse(await res.json());
    expect(file.sha256).toBe(sha256(bytes));
    // The rest was read and dropped: the service goes on answering uploads.
    expect((await upload(png, 'image/png')).status).toBe(201);
  });

  it('takes a raw body with its Content-Type and ?filename=', async () => {
    const doc = pdf('raw body');
    const res = await upload(doc, 'application/pdf', { raw: true, filename: 'Rechnung März.pdf' });
    expect(res.status).toBe(201);
    const file = (await res.json()) as MediaFile;
    const got = await fetch(file.file);
    expect(Buffer.from(await got.arrayBuffer()).equals(doc)).toBe(true);
    expect(got.headers.get('content-disposition')).toContain("filename*=UTF-8''Rechnung%20M%C3%A4rz.pdf");
  });

  it.each([
    ['a voice note', oggOpus, 'audio/ogg; codecs=opus', 'audio/ogg'],
    ['a JPEG', jpeg(4096), 'image/jpeg', 'image/jpeg'],
    ['a PDF without a declared type', pdf('undeclared'), 'application/octet-stream', 'application/pdf'],
    ['plain text, which has no magic number', Buffer.from('meeting notes\n'), 'text/plain', 'text/plain'],
  ])('accepts %s', async (_what, data, declared, stored) => {
    const file = await uploaded(data, declared);
    expect(file.mime_type).toBe(stored);
  });

  it('keeps the same bytes once: two uploads, one stored object', async () => {
    const bytes = jpeg(10_000);
    const a = await uploaded(bytes, 'image/jpeg');
    const b = await uploaded(bytes, 'image/jpeg');
    expect(a.sha256).toBe(b.sha256);
    expect(
      await countOf('select count(distinct object_key) as n from media_files where sha256 = $1', [a.sha256]),
    ).toBe(1);
  });

  it('answers exact slices for Range, 416 outside the file, 304 for a matching If-None-Match', async () => {
    // Over 1 MB, so slices cross the storage's chunk boundaries (whatever their size: 128 KB,
    // 512 KB, 1 MB).
    const size = 1_200_000;
    const bytes = jpeg(size);
    const file = await uploaded(bytes, 'image/jpeg');
    const cases: Array<[string, number, number]> = [
      ['bytes=0-99', 0, 99],
      ['bytes=131000-131100', 131_000, 131_100],
      ['bytes=524000-525000', 524_000, 525_000],
      ['bytes=1048000-1049000', 1_048_000, 1_049_000],
      ['bytes=100000-1100000', 100_000, 1_100_000],
      [`bytes=${size - 10}-`, size - 10, size - 1],
      ['bytes=-10', size - 10, size - 1],
      [`bytes=${size - 1000}-9999999`, size - 1000, size - 1],
    ];
    for (const [range, start, end] of cases) {
      const res = await fetch(file.file, { headers: { range } });
      expect([range, res.status]).toEqual([range, 206]);
      expect(res.headers.get('content-range')).toBe(`bytes ${start}-${end}/${size}`);
      expect(res.headers.get('content-length')).toBe(String(end - start + 1));
      const body = Buffer.from(await res.arrayBuffer());
      expect([range, body.equals(bytes.subarray(start, end + 1))]).toEqual([range, true]);
    }
    const outside = await fetch(file.file, { headers: { range: `bytes=${size}-` } });
    expect(outside.status).toBe(416);
    expect(outside.headers.get('content-range')).toBe(`bytes */${size}`);
    expect(((await outside.json()) as { code: string }).code).toBe('range_not_satisfiable');

    const cached = await fetch(file.file, { headers: { 'if-none-match': `"${file.sha256}"` } });
    expect(cached.status).toBe(304);
    const stale = await fetch(file.file, { headers: { 'if-none-match': '"other"' } });
    expect(stale.status).toBe(200);
    await stale.arrayBuffer();

    // If-Range: the part while the validator is this file's ETag, else the whole file.
    const resumed = await fetch(file.file, {
      headers: { range: 'bytes=0-9', 'if-range': `"${file.sha256}"` },
    });
    expect([resumed.status, (await resumed.arrayBuffer()).byteLength]).toEqual([206, 10]);
    const changed = await fetch(file.file, { headers: { range: 'bytes=0-9', 'if-range': '"other"' } });
    expect([changed.status, (await changed.arrayBuffer()).byteLength]).toEqual([200, size]);
  });

  it('answers HEAD with the headers alone', async () => {
    const bytes = jpeg(3 * 1024 * 1024);
    const file = await uploaded(bytes, 'image/jpeg');
    for (let i = 0; i < 3; i++) {
      const head = await fetch(file.file, { method: 'HEAD' });
      expect(head.status).toBe(200);
      expect(head.headers.get('content-length')).toBe(String(bytes.length));
      expect(head.headers.get('etag')).toBe(`"${file.sha256}"`);
      expect((await head.arrayBuffer()).byteLength).toBe(0);
    }
    const full = await fetch(file.file);
    expect(Buffer.from(await full.arrayBuffer()).equals(bytes)).toBe(true);
  });

  it('overrides the Content-Type with mime_type_type and mime_type_subtype', async () => {
    const file = await uploaded(png, 'image/png');
    const res = await fetch(`${file.file}?mime_type_type=application&mime_type_subtype=octet-stream`);
    expect(res.headers.get('content-type')).toBe('application/octet-stream');
    const sub = await fetch(`${file.file}?mime_type_subtype=x-png`);
    expect(sub.headers.get('content-type')).toBe('image/x-png');
    await Promise.all([res.arrayBuffer(), sub.arrayBuffer()]);
  });

  it('serves an Office document as itself (its type names XML, it is not a browser document)', async () => {
    const type = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
    const bytes = docx();
    const file = await uploaded(bytes, type, 'minutes.docx');
    expect(file.mime_type).toBe(type);
    const res = await fetch(file.file);
    expect([res.status, res.headers.get('content-type')]).toEqual([200, type]);
    expect(Buffer.from(await res.arrayBuffer()).equals(bytes)).toBe(true);
  });

  it('never serves a file as something a browser runs, and always sandboxed and unsniffed', async () => {
    const file = await uploaded(
      Buffer.from('<script>alert(document.cookie)</script>'),
      'text/plain',
      'x.txt',
    );
    for (const [type, subtype] of [
      ['text', 'html'],
      ['image', 'svg+xml'],
      ['application', 'xhtml+xml'],
      ['application', 'javascript'],
    ]) {
      const res = await fetch(`${file.file}?mime_type_type=${type}&mime_type_subtype=${subtype}`);
      expect([type, subtype, res.status]).toEqual([type, subtype, 400]);
      await res.arrayBuffer();
    }
    const plain = await fetch(file.file);
    expect(plain.headers.get('x-content-type-options')).toBe('nosniff');
    expect(plain.headers.get('content-security-policy')).toBe('sandbox');
    await plain.arrayBuffer();
  });

  it.each([
    ['bytes that are not the declared type', () => upload(pdf(), 'image/png'), 415, 'unsupported_media_type'],
    [
      'a type the network does not take',
      () => upload(Buffer.from('GIF89a....'), 'image/gif'),
      415,
      'unsupported_media_type',
    ],
    ['an image over 5 MB', () => upload(jpeg(5 * 1024 * 1024 + 1), 'image/jpeg'), 413, 'payload_too_large'],
    [
      'a raw image over 5 MB',
      () => upload(jpeg(5 * 1024 * 1024 + 1), 'image/jpeg', { raw: true }),
      413,
      'payload_too_large',
    ],
    [
      'a sticker over 500 KB',
      () =>
        upload(
          Buffer.concat([Buffer.from('RIFF\x00\x00\x00\x00WEBPVP8 ', 'latin1'), Buffer.alloc(600_000)]),
          'image/webp',
        ),
      413,
      'payload_too_large',
    ],
    [
      'a voice note over 16 MB',
      () => upload(Buffer.concat([oggOpus, Buffer.alloc(16 * 1024 * 1024)]), 'audio/ogg', { raw: true }),
      413,
      'payload_too_large',
    ],
    ['an empty file', () => upload(Buffer.alloc(0), 'image/png'), 400, 'validation_error'],
    ['an empty raw body', () => upload(Buffer.alloc(0), 'image/png', { raw: true }), 400, 'validation_error'],
    ['no file_encoded part', () => upload(png, 'image/png', { part: 'file' }), 400, 'validation_error'],
    ['no token', () => upload(png, 'image/png', { token: 'x'.repeat(40) }), 401, 'invalid_token'],
    ['multipart without a boundary', () => rawUpload('multipart/form-data', png), 400, 'validation_error'],
    [
      'multipart cut short (no closing boundary)',
      () => {
        const form = multipart({ name: 'file_encoded', filename: 'x.png', type: 'image/png', data: png });
        return rawUpload(form.contentType, form.body.subarray(0, form.body.length - 12));
      },
      400,
      'validation_error',
    ],
    [
      'multipart that is not multipart',
      () => rawUpload('multipart/form-data; boundary=abc', Buffer.from('no parts here at all')),
      400,
      'validation_error',
    ],
  ])('refuses %s', async (_what, send, status, code) => {
    const res = await send();
    const body = (await res.json()) as { code: string; limit?: number };
    expect([res.status, body.code]).toEqual([status, code]);
    if (code === 'payload_too_large') expect(body.limit).toBeGreaterThan(0);
  });

  it.each([
    ['an unknown id', '0b5f8a2e-3c1d-4e6f-9a7b-8c9d0e1f2a3b'],
    ['a malformed id', 'not-a-uuid'],
    ['an over-long id', 'a'.repeat(90)],
  ])('answers 404 for %s', async (_what, id) => {
    const res = await fetch(`${inbox.url}/api/v1/media/${id}/`);
    expect(res.status).toBe(404);
    expect(((await res.json()) as { code: string }).code).toBe('not_found');
  });

  it('refuses uploads that bypass the gateway', async () => {
    const mediaUrl = inbox.mediaUrl;
    expect(mediaUrl).not.toBe('');
    const form = multipart({ name: 'file_encoded', filename: 'x.png', type: 'image/png', data: png });
    const res = await fetch(`${mediaUrl}/api/v1/media/`, {
      method: 'POST',
      headers: { 'content-type': form.contentType, 'x-switchboard-uploader': 'eyJ1c2VyX2lkIjoxfQ.forged' },
      body: form.body,
    });
    expect(res.status).toBe(403);
  });
});

describe('an upload that outlasts MEDIA_UPLOAD_TIMEOUT', () => {
  const TIMEOUT_MS = 1_000;
  let slow: Inbox;
  let slowAdmin: string;
  beforeAll(
    async () =>
      ({ inbox: slow, admin: slowAdmin } = await startInboxAsAdmin({
        env: { MEDIA_UPLOAD_TIMEOUT: `${TIMEOUT_MS}ms` },
      })),
    120_000,
  );
  afterAll(async () => slow?.stop());

  it('is cut off even while bytes still trickle in: its chunks removed, no row', async () => {
    const nc = await connectNats(testNatsUrl(), 'media-trickle-test');
    const req = request(new URL(`${slow.url}/api/v1/media/`), {
      method: 'POST',
      headers: {
        authorization: `Token ${slowAdmin}`,
        'content-type': 'application/pdf',
        'content-length': String(4_000_000),
      },
    });
    let trickle: NodeJS.Timeout | undefined;
    try {
      const jsm = await jetstreamManager(nc);
      const stream = mediaStreamName(instanceId(slow.env.INSTANCE_ID ?? ''));
      const stored = async () => (await jsm.streams.info(stream)).state.messages;
      const first = await fetch(`${slow.url}/api/v1/media/`, {
        method: 'POST',
        headers: { authorization: `Token ${slowAdmin}`, 'content-type': 'image/jpeg' },
        body: jpeg(1024),
      });
      expect(first.status).toBe(201);
      const before = await stored();
      const pdfCount = () =>
        countOf("select count(*) as n from media_files where mime_type = 'application/pdf'", [], slow);
      const started = performance.now();
      const ended = new Promise<number>((resolve) => {
        req.on('error', () => resolve(performance.now() - started));
        req.on('response', (res) => resolve(res.statusCode === 201 ? -1 : performance.now() - started));
      });
      req.write(pdf('x'.repeat(1_500_000)));
      await waitFor(async () => (await stored()) > before, 10_000, 'the first chunks stored');
      // Never idle, never done: a kilobyte every 100 ms.
      trickle = setInterval(() => req.write(Buffer.alloc(1024, 0x20)), 100);
      const after = await ended;
      expect(after).toBeGreaterThanOrEqual(TIMEOUT_MS);
      await waitFor(async () => (await stored()) === before, 10_000, 'the cut-off upload’s chunks removed');
      expect(await pdfCount()).toBe(0);
    } finally {
      clearInterval(trickle);
      req.destroy();
      await nc.close();
    }
  });
});
