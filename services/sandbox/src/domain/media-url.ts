import { createHmac, timingSafeEqual } from 'node:crypto';

/** Path of the network's short-lived media download URLs (Meta's lookaside path, kept as is). */
export const ATTACHMENT_PATH = '/whatsapp_business/attachments/';

function hashOf(key: Buffer, mediaId: string, expiresAt: number): string {
  return createHmac('sha256', key).update(`${mediaId}:${expiresAt}`).digest('hex');
}

/** A download URL that works until `expiresAt` (POSIX seconds) and only for this media id. */
export function mediaDownloadUrl(baseUrl: string, key: Buffer, mediaId: string, expiresAt: number): string {
  const url = new URL(ATTACHMENT_PATH, baseUrl);
  url.searchParams.set('mid', mediaId);
  url.searchParams.set('ext', String(expiresAt));
  url.searchParams.set('hash', hashOf(key, mediaId, expiresAt));
  return url.toString();
}

export function mediaUrlValid(
  key: Buffer,
  mediaId: string,
  expiresAt: number,
  hash: string,
  nowSeconds: number,
): boolean {
  if (nowSeconds >= expiresAt) return false;
  const given = Buffer.from(hash, 'hex');
  const expected = Buffer.from(hashOf(key, mediaId, expiresAt), 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}
