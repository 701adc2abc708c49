import { createHash } from 'node:crypto';
import { numericId } from '../domain/ids.ts';
import type { BusinessNumber, StoredMedia } from './model.ts';

/** Keeps bytes as the network's media store does, under a fresh numeric media id. */
export function putMedia(
  number: BusinessNumber,
  input: { data: Buffer; mimeType: string; filename: string | undefined; origin: StoredMedia['origin'] },
  createdAt: number,
): StoredMedia {
  const media: StoredMedia = {
    id: numericId(16),
    mimeType: input.mimeType,
    sha256: createHash('sha256').update(input.data).digest('hex'),
    data: input.data,
    filename: input.filename,
    origin: input.origin,
    createdAt,
  };
  number.media.set(media.id, media);
  return media;
}
