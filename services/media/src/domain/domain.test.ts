import { NetworkError, ServiceError } from '@switchboard/proto';
import { describe, expect, it } from 'vitest';
import { fetchRefused, inboundMediaOf, MAX_FETCH_ATTEMPTS } from './inbound-media.ts';
import { contentDisposition } from './media-file.ts';
import { cleanFileName, decideMimeType, mediaKindOf } from './media-kind.ts';
import { etagMatches, parseRange } from './range.ts';

describe('parseRange', () => {
  it.each([
    [undefined, 100, { kind: 'whole' }],
    ['bytes=0-9', 100, { kind: 'partial', range: { start: 0, end: 9 } }],
    ['bytes=90-', 100, { kind: 'partial', range: { start: 90, end: 99 } }],
    ['bytes=-10', 100, { kind: 'partial', range: { start: 90, end: 99 } }],
    ['bytes=-500', 100, { kind: 'partial', range: { start: 0, end: 99 } }],
    ['bytes=50-500', 100, { kind: 'partial', range: { start: 50, end: 99 } }],
    ['bytes=100-', 100, { kind: 'unsatisfiable' }],
    ['bytes=10-5', 100, { kind: 'unsatisfiable' }],
    ['bytes=-0', 100, { kind: 'unsatisfiable' }],
    ['bytes=0-1,5-6', 100, { kind: 'whole' }],
    ['items=0-1', 100, { kind: 'whole' }],
    ['bytes=-', 100, { kind: 'whole' }],
  ])('%s of %i bytes', (header, size, expected) => {
    expect(parseRange(header, size)).toEqual(expected);
  });

  it('matches If-None-Match lists, weak tags and *', () => {
    expect(etagMatches('"a", W/"b"', '"b"')).toBe(true);
    expect(etagMatches('*', '"x"')).toBe(true);
    expect(etagMatches('"a"', '"b"')).toBe(false);
    expect(etagMatches(undefined, '"b"')).toBe(false);
  });
});

describe('decideMimeType', () => {
  it.each([
    ['image/png', 'image/png', { ok: true, mimeType: 'image/png' }],
    ['image/png; charset=x', 'image/png', { ok: true, mimeType: 'image/png' }],
    ['audio/ogg; codecs=opus', 'audio/opus', { ok: true, mimeType: 'audio/ogg' }],
    ['audio/ogg', 'audio/ogg; codecs=opus', { ok: true, mimeType: 'audio/ogg' }],
    [undefined, 'audio/ogg; codecs=opus', { ok: true, mimeType: 'audio/ogg' }],
    ['application/msword', 'application/x-cfb', { ok: true, mimeType: 'application/msword' }],
    ['text/plain', undefined, { ok: true, mimeType: 'text/plain' }],
    [undefined, 'application/pdf', { ok: true, mimeType: 'application/pdf' }],
    ['application/octet-stream', 'image/jpeg', { ok: true, mimeType: 'image/jpeg' }],
    // Names clients use for the network's types.
    ['image/jpg', 'image/jpeg', { ok: true, mimeType: 'image/jpeg' }],
    ['audio/opus', 'audio/ogg; codecs=opus', { ok: true, mimeType: 'audio/ogg' }],
    ['audio/mp3', 'audio/mpeg', { ok: true, mimeType: 'audio/mpeg' }],
  ])('accepts %s sniffed as %s', (declared, sniffed, expected) => {
    expect(decideMimeType(declared, sniffed)).toEqual(expected);
  });

  it.each([
    ['image/png', 'application/pdf'],
    ['image/png', undefined],
    ['image/gif', 'image/gif'],
    [undefined, undefined],
    [undefined, 'image/gif'],
    ['application/zip', 'application/zip'],
  ])('refuses %s sniffed as %s', (declared, sniffed) => {
    expect(decideMimeType(declared, sniffed).ok).toBe(false);
  });

  it('files types under the network’s kinds', () => {
    expect(mediaKindOf('image/webp')).toBe('sticker');
    expect(mediaKindOf('audio/ogg; codecs=opus')).toBe('audio');
    expect(mediaKindOf('video/3gpp')).toBe('video');
    expect(mediaKindOf('text/plain')).toBe('document');
    expect(mediaKindOf('image/gif')).toBeUndefined();
  });
});

describe('file names', () => {
  it('keeps the last path segment without control characters', () => {
    expect(cleanFileName('../../etc/passwd')).toBe('passwd');
    expect(cleanFileName('C:\\Users\\a\\report.pdf')).toBe('report.pdf');
    expect(cleanFileName('bad\u0000\u001fname.txt')).toBe('badname.txt');
    expect(cleanFileName('\u202egnp.exe.pdf')).toBe('gnp.exe.pdf');
    expect(cleanFileName('zero\u200bwidth.pdf')).toBe('zerowidth.pdf');
    expect(cleanFileName('   ')).toBeNull();
    expect(cleanFileName(undefined)).toBeNull();
  });

  it('names the file in Content-Disposition in ASCII and UTF-8', () => {
    expect(contentDisposition('Grüße "x".pdf')).toBe(
      `inline; filename="Gr__e _x_.pdf"; filename*=UTF-8''Gr%C3%BC%C3%9Fe%20%22x%22.pdf`,
    );
    // RFC 8187 attr-char has no ' ( ) *: they are percent-encoded too.
    expect(contentDisposition("it's (1)*.pdf")).toBe(
      `inline; filename="it's (1)*.pdf"; filename*=UTF-8''it%27s%20%281%29%2A.pdf`,
    );
  });
});

describe('inboundMediaOf', () => {
  // The shape of the Cloud API's messages webhook (entry[].changes[].value.messages[]), written
  // here with made-up ids, as Meta's webhook reference for media messages shows it.
  const body = (messages: unknown[]) =>
    JSON.stringify({
      object: 'whatsapp_business_account',
      entry: [
        { id: '1', changes: [{ field: 'messages', value: { messaging_product: 'whatsapp', messages } }] },
      ],
    });

  it('finds each media message with the network’s id, type and file name', () => {
    const refs = inboundMediaOf(
      body([
        { id: 'wamid.A', type: 'text', text: { body: 'hi' } },
        { id: 'wamid.B', type: 'image', image: { id: '1001', mime_type: 'image/jpeg', sha256: 'x' } },
        {
          id: 'wamid.C',
          type: 'document',
          document: { id: '1002', mime_type: 'application/pdf', filename: 'a.pdf' },
        },
        { id: 'wamid.D', type: 'sticker', sticker: { id: '1003', mime_type: 'image/webp' } },
        { id: 'wamid.E', type: 'audio' },
      ]),
    );
    expect(refs).toEqual([
      { wamid: 'wamid.B', networkMediaId: '1001', mimeType: 'image/jpeg', fileName: undefined },
      { wamid: 'wamid.C', networkMediaId: '1002', mimeType: 'application/pdf', fileName: 'a.pdf' },
      { wamid: 'wamid.D', networkMediaId: '1003', mimeType: 'image/webp', fileName: undefined },
    ]);
  });

  it.each(['not json', '[]', '{"entry":"x"}', body([{ type: 'image' }]), '{"entry":[{"changes":[1]}]}'])(
    'finds nothing in %s',
    (text) => {
      expect(inboundMediaOf(text)).toEqual([]);
    },
  );
});

describe('fetchRefused', () => {
  const network = (operation: string, status: number) =>
    new NetworkError({ kind: 'api', operation, status, message: `${operation} ${status}` });

  it.each([
    ['the network refusing the media id', network('getMediaUrl', 404), 1, true],
    [
      'a refused download, first attempts (the URL may have expired)',
      network('downloadMedia', 404),
      2,
      false,
    ],
    ['a refused download, third attempt', network('downloadMedia', 404), 3, true],
    ['the network failing', network('downloadMedia', 503), 5, false],
    ['the network failing for good', network('getMediaUrl', 503), MAX_FETCH_ATTEMPTS, true],
    ['a file too large', new ServiceError('payload_too_large'), 1, true],
    ['chats unavailable', ServiceError.unavailable('chats'), 1, false],
    [
      'the database down',
      Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
      50,
      false,
    ],
    ['a fault of ours that does not pass, before the limit', new TypeError('bad'), 3, false],
    ['a fault of ours that does not pass, at the limit', new TypeError('bad'), MAX_FETCH_ATTEMPTS, true],
  ])('%s', (_what, err, attempt, expected) => {
    expect(fetchRefused(err, attempt)).toBe(expected);
  });
});
