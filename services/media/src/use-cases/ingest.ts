import { randomUUID } from 'node:crypto';
import { baseMimeType, type MediaCategory, ServiceError } from '@switchboard/proto';
import { fileTypeFromBuffer } from 'file-type';
import type { Kysely } from 'kysely';
import type { MediaStorage } from '../adapters/storage.ts';
import type { MediaDatabase, MediaFileRow, MediaOrigin } from '../db.ts';
import { cleanFileName, decideMimeType, type MediaLimits, mediaKindOf } from '../domain/media-kind.ts';
import { findImportedFile, insertMediaFile, objectInUse } from '../store/media-files.ts';

/** Bytes `file-type` reads to recognise every format it knows. */
const SNIFF_BYTES = 4100;

export interface IngestDeps {
  db: Kysely<MediaDatabase>;
  storage: MediaStorage;
  limits: MediaLimits;
}

export interface IngestInput {
  body: AsyncIterable<Uint8Array>;
  /** The type the client or the network named. */
  declaredType: string | undefined;
  fileName: string | undefined;
  /** `Content-Length` when known: a body already larger than the kind's limit is refused unread. */
  declaredSize?: number | undefined;
  origin: MediaOrigin;
  createdBy: number | null;
  /** Inbound files: the customer message, and the network's word on the type (not sniffed). */
  sourceWamid?: string;
  trustDeclaredType?: boolean;
}

function tooLarge(kind: MediaCategory, limit: number): ServiceError {
  return new ServiceError('payload_too_large', `A ${kind} file may have at most ${limit} bytes.`, {
    details: { limit, kind },
  });
}

/** A view of the bytes as a Buffer: `Buffer.from(view)` would copy them. */
function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Reads the first bytes of a body, keeping the iterator for the rest. */
async function readHead(iterator: AsyncIterator<Uint8Array>): Promise<{ head: Buffer; done: boolean }> {
  const parts: Buffer[] = [];
  let length = 0;
  while (length < SNIFF_BYTES) {
    const next = await iterator.next();
    if (next.done) return { head: joined(parts), done: true };
    const chunk = asBuffer(next.value);
    parts.push(chunk);
    length += chunk.length;
  }
  return { head: joined(parts), done: false };
}

function joined(parts: Buffer[]): Buffer {
  return parts.length === 1 && parts[0] ? parts[0] : Buffer.concat(parts);
}

/**
 * Stores a stream as a media file, reading it once: the type is decided from the first bytes
 * (sniffed, and checked against the declared type), then the bytes flow to the storage while
 * they are counted (the kind's limit stops them); the storage hashes them as it writes. Bytes already stored (same
 * SHA-256) are kept once: the new object is removed and the file points at the old one. An
 * imported file that an earlier import stored (same bytes, type and name) is that file.
 */
export async function ingestMedia(deps: IngestDeps, input: IngestInput): Promise<MediaFileRow> {
  const iterator = input.body[Symbol.asyncIterator]();
  try {
    return await ingestFrom(deps, input, iterator);
  } catch (err) {
    // Leave the rest of the body unread: the answer goes out now.
    await iterator.return?.();
    throw err;
  }
}

async function ingestFrom(
  deps: IngestDeps,
  input: IngestInput,
  iterator: AsyncIterator<Uint8Array>,
): Promise<MediaFileRow> {
  const { head, done } = await readHead(iterator);
  if (head.length === 0) {
    throw ServiceError.validation({ file_encoded: ['The submitted file is empty.'] }, 'The file is empty.');
  }
  let mimeType: string;
  if (input.trustDeclaredType && input.declaredType && mediaKindOf(input.declaredType)) {
    mimeType = baseMimeType(input.declaredType);
  } else {
    const sniffed = (await fileTypeFromBuffer(head))?.mime;
    const verdict = decideMimeType(input.declaredType, sniffed);
    if (!verdict.ok) throw new ServiceError('unsupported_media_type', verdict.reason);
    mimeType = verdict.mimeType;
  }
  const kind = mediaKindOf(mimeType) ?? 'document';
  const limit = deps.limits[kind];
  if (input.declaredSize !== undefined && input.declaredSize > limit) throw tooLarge(kind, limit);

  let size = 0;
  async function* counted(): AsyncGenerator<Buffer> {
    const take = (chunk: Buffer): Buffer => {
      size += chunk.length;
      if (size > limit) throw tooLarge(kind, limit);
      return chunk;
    };
    yield take(head);
    if (done) return;
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
      yield take(asBuffer(next.value));
    }
  }

  const key = randomUUID();
  let sha256: string;
  try {
    // The storage digests the bytes as it writes them: one pass over them, not two.
    ({ sha256 } = await deps.storage.put(key, counted()));
  } catch (err) {
    await deps.storage.remove(key).catch(() => undefined);
    throw err;
  }
  const fileName = cleanFileName(input.fileName);
  if (input.origin === 'import') {
    // An import sent again: its files are the ones stored the first time, not new ones.
    const earlier = await findImportedFile(deps.db, { sha256, size, mimeType, fileName });
    if (earlier) {
      if (!(await objectInUse(deps.db, key))) await deps.storage.remove(key);
      return earlier;
    }
  }
  let row: MediaFileRow;
  try {
    row = await insertMediaFile(deps.db, {
      id: randomUUID(),
      objectKey: key,
      sha256,
      size,
      mimeType,
      fileName,
      origin: input.origin,
      createdBy: input.createdBy,
      ...(input.sourceWamid === undefined ? {} : { sourceWamid: input.sourceWamid }),
    });
  } catch (err) {
    // Bytes no row points at would stay unreachable: they go, unless the insert may have
    // committed after all (then, or when that cannot be told now, they stay).
    const inUse = await objectInUse(deps.db, key).catch(() => true);
    if (!inUse) await deps.storage.remove(key).catch(() => undefined);
    throw err;
  }
  // The same bytes were stored before: the file points at that object, this copy goes.
  if (row.object_key !== key && !(await objectInUse(deps.db, key))) await deps.storage.remove(key);
  return row;
}
