import { z } from 'zod';
import { MessagingProductSchema } from './common.ts';

export type MediaCategory = 'audio' | 'document' | 'image' | 'sticker' | 'video';

/** The message types that carry a file: the object under the type names it by media `id` or `link`. */
export const MEDIA_MESSAGE_TYPES: readonly MediaCategory[] = [
  'image',
  'audio',
  'video',
  'document',
  'sticker',
];

const MB = 1024 * 1024;

/** The Cloud API's supported media types and their size ceilings. */
export const SUPPORTED_MEDIA: Readonly<
  Record<MediaCategory, { mimeTypes: readonly string[]; maxBytes: number }>
> = {
  audio: { mimeTypes: ['audio/aac', 'audio/amr', 'audio/mpeg', 'audio/mp4', 'audio/ogg'], maxBytes: 16 * MB },
  document: {
    mimeTypes: [
      'text/plain',
      'application/pdf',
      'application/msword',
      'application/vnd.ms-excel',
      'application/vnd.ms-powerpoint',
      'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
      'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
      'application/vnd.openxmlformats-officedocument.presentationml.presentation',
    ],
    maxBytes: 100 * MB,
  },
  image: { mimeTypes: ['image/jpeg', 'image/png'], maxBytes: 5 * MB },
  sticker: { mimeTypes: ['image/webp'], maxBytes: 500 * 1024 },
  video: { mimeTypes: ['video/mp4', 'video/3gpp'], maxBytes: 16 * MB },
};

/** The bare MIME type (`audio/ogg; codecs=opus` → `audio/ogg`), lower-cased. */
export function baseMimeType(contentType: string): string {
  return (contentType.split(';')[0] ?? '').trim().toLowerCase();
}

/** The size ceiling for a MIME type, or undefined when the network does not accept it at all. */
export function mediaLimitFor(contentType: string): number | undefined {
  const mime = baseMimeType(contentType);
  let limit: number | undefined;
  for (const { mimeTypes, maxBytes } of Object.values(SUPPORTED_MEDIA)) {
    if (mimeTypes.includes(mime)) limit = Math.max(limit ?? 0, maxBytes);
  }
  return limit;
}

/** `POST /media` answer. */
export const MediaUploadResponseSchema = z.looseObject({ id: z.string().min(1) });
export type MediaUploadResponse = z.infer<typeof MediaUploadResponseSchema>;

/** `GET /{media_id}` answer: a short-lived URL to download the bytes with the same API key. */
export const MediaInfoSchema = z.looseObject({
  messaging_product: MessagingProductSchema,
  url: z.url(),
  mime_type: z.string().min(1),
  sha256: z.string().min(1),
  // Meta documents it as a number and has been seen sending it as a string.
  file_size: z.union([z.number().int().nonnegative(), z.string().regex(/^\d+$/)]),
  id: z.string().min(1),
});
export type MediaInfo = z.infer<typeof MediaInfoSchema>;

/** `DELETE /{media_id}` answer. */
export const MediaDeleteResponseSchema = z.looseObject({ success: z.boolean() });
export type MediaDeleteResponse = z.infer<typeof MediaDeleteResponseSchema>;

/** What the client uploads: bytes, their MIME type and an optional file name. */
export const MediaUploadInputSchema = z.object({
  data: z.instanceof(Uint8Array).refine((d) => d.byteLength > 0, 'the file is empty'),
  mimeType: z.string().refine((m) => mediaLimitFor(m) !== undefined, 'not a media type the network accepts'),
  filename: z.string().min(1).max(240).optional(),
});
export type MediaUploadInput = z.infer<typeof MediaUploadInputSchema>;
