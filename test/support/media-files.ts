import { createHash } from 'node:crypto';
import { strToU8, zipSync } from 'fflate';

/**
 * Small real files of the kinds the tests upload, written here byte for byte. The formats'
 * first bytes (what content sniffing reads) come from their specifications: PNG (ISO/IEC 15948,
 * §5.2 signature and IHDR/IDAT/IEND chunks), JPEG (ITU-T T.81 SOI/APP0 "JFIF"/EOI markers),
 * PDF (ISO 32000-1 §7.5.2 header `%PDF-1.x`), Ogg (RFC 3533 page header "OggS") carrying an
 * Opus identification header (RFC 7845 §5.1 "OpusHead").
 */

// A 1×1 PNG: signature, IHDR, one IDAT, IEND.
export const png = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==',
  'base64',
);

/** A JPEG: SOI, an APP0 JFIF segment, then `size` filler bytes and EOI (sniffers read the head). */
export function jpeg(size = 2048): Buffer {
  const head = Buffer.from([
    0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00,
    0x01, 0x00, 0x00,
  ]);
  const body = Buffer.alloc(Math.max(0, size - head.length - 2));
  for (let i = 0; i < body.length; i++) body[i] = (i * 31 + 7) & 0xff;
  return Buffer.concat([head, body, Buffer.from([0xff, 0xd9])]);
}

export function pdf(note = 'Switchboard test document'): Buffer {
  return Buffer.from(
    `%PDF-1.4\n1 0 obj <</Type /Catalog /Pages 2 0 R>> endobj\n2 0 obj <</Type /Pages /Kids [] /Count 0>> endobj\n` +
      `% ${note}\ntrailer <</Root 1 0 R>>\n%%EOF\n`,
    'latin1',
  );
}

/** An Ogg page with an Opus identification header: a voice note's first bytes. */
export const oggOpus = Buffer.concat([
  Buffer.from('OggS', 'ascii'),
  Buffer.from([0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0x2a, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 19]),
  Buffer.from('OpusHead', 'ascii'),
  Buffer.from([1, 1, 0x38, 0x01, 0x80, 0xbb, 0, 0, 0, 0, 0]),
]);

export const sha256 = (data: Buffer | Uint8Array) => createHash('sha256').update(data).digest('hex');

/** A multipart/form-data body with one file part (and optional fields). */
export function multipart(
  part: { name: string; filename: string; type: string; data: Buffer },
  fields: Record<string, string> = {},
): { body: Buffer; contentType: string } {
  const boundary = `test-${Math.random().toString(16).slice(2)}`;
  const chunks: Buffer[] = [];
  for (const [k, v] of Object.entries(fields)) {
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`));
  }
  chunks.push(
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"; filename="${part.filename}"\r\n` +
        `Content-Type: ${part.type}\r\n\r\n`,
    ),
    part.data,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  );
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

/**
 * A Word document (ECMA-376 Part 2, Open Packaging Conventions): a ZIP whose first entry is
 * `[Content_Types].xml` naming the main part's content type, and the main part
 * `word/document.xml` (Part 1, §17.2 `w:document` / `w:body` / `w:p` / `w:r` / `w:t`).
 */
export function docx(text = 'Switchboard test document'): Buffer {
  const types =
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>' +
    '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
    '<Default Extension="xml" ContentType="application/xml"/>' +
    '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>' +
    '</Types>';
  const document =
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>' +
    '<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">' +
    `<w:body><w:p><w:r><w:t>${text}</w:t></w:r></w:p></w:body></w:document>`;
  return Buffer.from(
    zipSync({ '[Content_Types].xml': strToU8(types), 'word/document.xml': strToU8(document) }, { level: 0 }),
  );
}
