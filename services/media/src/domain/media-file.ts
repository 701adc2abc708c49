import type { MediaFile } from '@switchboard/proto';
import type { MediaFileRow } from '../db.ts';

/** Where a media file is read: `media/{id}/` under the inbox's public URL. */
export function mediaFileUrl(publicUrl: string, id: string): string {
  return new URL(`/api/v1/media/${id}/`, publicUrl).toString();
}

export function mediaFileView(row: MediaFileRow, publicUrl: string): MediaFile {
  return {
    id: row.id,
    file: mediaFileUrl(publicUrl, row.id),
    mime_type: row.mime_type,
    size: Number(row.size),
    sha256: row.sha256,
  };
}

/**
 * The name as RFC 8187 `ext-value` characters: `encodeURIComponent` leaves `'()*` as they are,
 * which are not `attr-char`s there.
 */
const extValue = (name: string): string =>
  encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** `Content-Disposition` naming the file: an ASCII fallback plus the UTF-8 name (RFC 6266). */
export function contentDisposition(fileName: string): string {
  const ascii = fileName.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  return `inline; filename="${ascii}"; filename*=UTF-8''${extValue(fileName)}`;
}
