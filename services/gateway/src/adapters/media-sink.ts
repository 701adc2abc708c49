import type { HeaderSigner } from '@switchboard/kit';
import {
  baseMimeType,
  MEDIA_UPLOADER_HEADER,
  type MediaFile,
  MediaFileSchema,
  type MediaUploader,
  type Principal,
  ServiceError,
} from '@switchboard/proto';
import { z } from 'zod';

/**
 * Where the media files of an imported chat are stored. The import links each media line to its
 * file and asks the sink to store it: the stored file, or why the file was refused (the message
 * is then imported without it, `media: null`, and the reason is listed in the response's
 * warnings). A sink that cannot be reached throws (503): parts sent before may be stored, and sending
 * the import again completes it (message ids and stored files make it idempotent).
 */
export interface MediaSink {
  store(file: { fileName: string; mimeType: string; bytes: Buffer }): Promise<MediaSinkOutcome>;
}

export type MediaSinkOutcome = { stored: MediaFile } | { refused: string };

/** A sink per importing user: their imported files are recorded as theirs. */
export type MediaSinkFor = (importer: Principal) => MediaSink;

/** Statuses of the media service that refuse this one file (its type, size or name), not the import. */
const REFUSALS = new Set([400, 413, 415]);
/** The media service's `filename` query parameter takes at most this many characters. */
const MAX_FILE_NAME = 240;
const MIME_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,63}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/;
/** Long enough for the largest document (100 MB) over the cluster's network. */
const STORE_TIMEOUT_MS = 120_000;

const RefusalBody = z.looseObject({ code: z.string(), reason: z.string() });

/**
 * The media service (`MEDIA_URL`) as the chat import's sink: each file is uploaded as the raw
 * body, its type and name declared, with the importer and the origin `import` in the header the
 * gateway signs (the media service takes the origin from nowhere else). The media service sniffs
 * and limits it like any upload, keeps the same bytes once, and refers an import sent again to
 * the files it stored the first time.
 */
export function mediaServiceSink(opts: { mediaUrl: string; uploaderSigner: HeaderSigner }): MediaSinkFor {
  const target = `${opts.mediaUrl.replace(/\/+$/, '')}/api/v1/media/`;
  return (importer) => ({
    async store(file) {
      const mimeType = baseMimeType(file.mimeType);
      if (!MIME_TYPE.test(mimeType)) return { refused: `“${file.mimeType}” is not a MIME type.` };
      if (file.bytes.length === 0) return { refused: 'The file is empty.' };
      const uploader: MediaUploader = {
        user_id: importer.user_id,
        role: importer.role,
        at: Date.now(),
        origin: 'import',
      };
      // Well-formed (a lone surrogate cannot be URL-encoded), and the end of a long name: its extension.
      const name = file.fileName.slice(-MAX_FILE_NAME).toWellFormed();
      let res: Response;
      let body: unknown;
      try {
        res = await fetch(`${target}?filename=${encodeURIComponent(name)}`, {
          method: 'POST',
          headers: {
            'content-type': mimeType,
            [MEDIA_UPLOADER_HEADER]: opts.uploaderSigner.sign(JSON.stringify(uploader)),
          },
          body: file.bytes,
          signal: AbortSignal.timeout(STORE_TIMEOUT_MS),
        });
        body = await res.json();
      } catch (err) {
        throw unavailable(err);
      }
      if (res.status === 201) {
        const stored = MediaFileSchema.safeParse(body);
        if (stored.success) return { stored: stored.data };
        throw unavailable(stored.error);
      }
      const refusal = RefusalBody.safeParse(body);
      if (REFUSALS.has(res.status) && refusal.success) {
        return { refused: `${refusal.data.reason} (${refusal.data.code})` };
      }
      throw unavailable(new Error(`the media service answered ${res.status}`));
    },
  });
}

function unavailable(cause: unknown): ServiceError {
  return ServiceError.unavailable(
    'media',
    'The media service is unavailable: the import is incomplete; send it again later (what is stored already is not stored twice).',
    { cause },
  );
}
