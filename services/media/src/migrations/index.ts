import type { Migration } from '@switchboard/kit';
import { m0001MediaFiles } from './0001_media_files.ts';

export const mediaMigrations: readonly Migration[] = [m0001MediaFiles];
