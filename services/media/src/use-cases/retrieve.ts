import type { Readable } from 'node:stream';
import { MediaIdSchema, ServiceError } from '@switchboard/proto';
import type { Kysely } from 'kysely';
import type { MediaStorage } from '../adapters/storage.ts';
import type { MediaDatabase, MediaFileRow } from '../db.ts';
import { Lru } from '../domain/lru.ts';
import { type ByteRange, etagMatches, parseRange } from '../domain/range.ts';
import { findMediaFile } from '../store/media-files.ts';

export type Retrieval =
  | { kind: 'not_modified'; file: MediaFileRow; etag: string }
  | {
      kind: 'bytes';
      file: MediaFileRow;
      etag: string;
      range: ByteRange | undefined;
      /** Absent when only the headers were asked for (HEAD). */
      body: Readable | undefined;
    };

const notFound = () => new ServiceError('not_found', 'No media file with this id.');

/** What retrieval reads of a file never changes: recently read files are answered from memory. */
export type FileCache = Lru<string, MediaFileRow>;
export const createFileCache = (): FileCache => new Lru(10_000);

/** A media file's bytes (or the slice a Range asks for), answered without a token. */
export async function retrieveMedia(
  deps: { db: Kysely<MediaDatabase>; storage: MediaStorage; files: FileCache },
  input: {
    id: string;
    range: string | undefined;
    ifNoneMatch: string | undefined;
    /** `If-Range`: the Range holds only while it names this file's ETag (RFC 9110 §13.1.5). */
    ifRange?: string | undefined;
    headersOnly?: boolean;
  },
): Promise<Retrieval> {
  if (!MediaIdSchema.safeParse(input.id).success) throw notFound();
  const file = deps.files.get(input.id) ?? (await findMediaFile(deps.db, input.id));
  if (!file) throw notFound();
  deps.files.set(input.id, file);
  const etag = `"${file.sha256}"`;
  if (etagMatches(input.ifNoneMatch, etag)) return { kind: 'not_modified', file, etag };
  const size = Number(file.size);
  // A validator that is not this file's (a date, another ETag): the whole file, not a part.
  const rangeHolds = input.ifRange === undefined || input.ifRange.trim() === etag;
  const verdict = parseRange(rangeHolds ? input.range : undefined, size);
  if (verdict.kind === 'unsatisfiable') {
    throw new ServiceError('range_not_satisfiable', undefined, {
      headers: { 'content-range': `bytes */${size}` },
      details: { size },
    });
  }
  const range = verdict.kind === 'partial' ? verdict.range : undefined;
  if (input.headersOnly) return { kind: 'bytes', file, etag, range, body: undefined };
  const body = await deps.storage.read(file.object_key, range);
  if (!body) throw new Error(`media file ${file.id}: object ${file.object_key} is missing from the storage`);
  return { kind: 'bytes', file, etag, range, body };
}
