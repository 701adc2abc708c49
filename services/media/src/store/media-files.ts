import { type Kysely, sql } from 'kysely';
import type { MediaDatabase, MediaFileRow, MediaOrigin } from '../db.ts';

type Db = Kysely<MediaDatabase>;

export async function findMediaFile(db: Db, id: string): Promise<MediaFileRow | undefined> {
  return db.selectFrom('media_files').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function findMediaBySourceWamid(db: Db, wamid: string): Promise<MediaFileRow | undefined> {
  return db.selectFrom('media_files').selectAll().where('source_wamid', '=', wamid).executeTakeFirst();
}

export interface NewMediaFile {
  id: string;
  objectKey: string;
  sha256: string;
  size: number;
  mimeType: string;
  fileName: string | null;
  origin: MediaOrigin;
  createdBy: number | null;
  sourceWamid?: string;
}

/**
 * Inserts a file. Its bytes go to the object already holding the same bytes (same digest and
 * size), if any, else to `objectKey`: the row says which. An inbound file for a message already
 * stored keeps the first (answered).
 */
export async function insertMediaFile(db: Db, f: NewMediaFile): Promise<MediaFileRow> {
  const inserted = await db
    .insertInto('media_files')
    .values({
      id: f.id,
      object_key: sql<string>`coalesce(
        (select object_key from media_files where sha256 = ${f.sha256} and size = ${f.size} order by created_at limit 1),
        ${f.objectKey}
      )`,
      sha256: f.sha256,
      size: f.size,
      mime_type: f.mimeType,
      file_name: f.fileName,
      origin: f.origin,
      created_by: f.createdBy,
      source_wamid: f.sourceWamid ?? null,
      network_media_id: null,
      network_media_at: null,
    })
    .onConflict((oc) => oc.column('source_wamid').doNothing())
    .returningAll()
    .executeTakeFirst();
  if (inserted) return inserted;
  const existing = f.sourceWamid ? await findMediaBySourceWamid(db, f.sourceWamid) : undefined;
  if (!existing) throw new Error('media file neither inserted nor found');
  return existing;
}

/**
 * A file an earlier import stored with the same bytes, type and name: importing a chat again
 * (or a later export with the same attachments) refers to it instead of adding a new file.
 */
export async function findImportedFile(
  db: Db,
  f: { sha256: string; size: number; mimeType: string; fileName: string | null },
): Promise<MediaFileRow | undefined> {
  let query = db
    .selectFrom('media_files')
    .selectAll()
    .where('origin', '=', 'import')
    .where('sha256', '=', f.sha256)
    .where('size', '=', String(f.size))
    .where('mime_type', '=', f.mimeType);
  query =
    f.fileName === null ? query.where('file_name', 'is', null) : query.where('file_name', '=', f.fileName);
  return query.orderBy('created_at').limit(1).executeTakeFirst();
}

/** Whether any file still refers to an object (before the object is removed). */
export async function objectInUse(db: Db, objectKey: string): Promise<boolean> {
  return (await objectKeysInUse(db, [objectKey])).has(objectKey);
}

export async function recordNetworkMediaId(
  db: Db,
  id: string,
  networkMediaId: string,
  at: Date,
): Promise<void> {
  await db
    .updateTable('media_files')
    .set({ network_media_id: networkMediaId, network_media_at: at })
    .where('id', '=', id)
    .execute();
}

/** Whether the database holds any file at all (a sweep against an empty one removes nothing). */
export async function anyMediaFile(db: Db): Promise<boolean> {
  return (await db.selectFrom('media_files').select('id').limit(1).executeTakeFirst()) !== undefined;
}

/** Which of `objectKeys` any file refers to (the orphan sweep keeps those). */
export async function objectKeysInUse(db: Db, objectKeys: readonly string[]): Promise<Set<string>> {
  if (objectKeys.length === 0) return new Set();
  const rows = await db
    .selectFrom('media_files')
    .select('object_key')
    .distinct()
    .where('object_key', 'in', objectKeys)
    .execute();
  return new Set(rows.map((r) => r.object_key));
}
