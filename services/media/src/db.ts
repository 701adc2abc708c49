import type { ColumnType, Generated, Selectable } from 'kysely';

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;

export type MediaOrigin = 'upload' | 'inbound' | 'import';

export interface MediaFilesTable {
  id: string;
  /** Where the bytes are in the storage; files with the same bytes share one object. */
  object_key: string;
  sha256: string;
  size: ColumnType<string, number, number>;
  mime_type: string;
  file_name: string | null;
  origin: MediaOrigin;
  /** The uploading user; null for files the network or an import brought. */
  created_by: number | null;
  /** The customer message an inbound file came with (one file per message). */
  source_wamid: string | null;
  /** The network's id of these bytes, once uploaded for sending, and when. */
  network_media_id: string | null;
  network_media_at: Date | null;
  created_at: Generated<Date> & Timestamp;
}

export interface MediaDatabase {
  media_files: MediaFilesTable;
}

export type MediaFileRow = Selectable<MediaFilesTable>;
