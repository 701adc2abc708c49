import type { Migration } from '@switchboard/kit';
import { m0001MediaFiles } from './0001_media_files.ts';
import { m0002MediaFilesObjectKey } from './0002_media_files_object_key.ts';

export const mediaMigrations: readonly Migration[] = [m0001MediaFiles, m0002MediaFilesObjectKey];
