import type { Multipart } from '@fastify/multipart';
import type { HttpServer } from '@switchboard/kit';
import { z } from 'zod';
import { failures, NetworkFailure } from '../domain/failure.ts';
import { ATTACHMENT_PATH, mediaDownloadUrl, mediaUrlValid } from '../domain/media-url.ts';
import {
  baseMimeType,
  MediaDeleteResponseSchema,
  MediaInfoSchema,
  MediaUploadResponseSchema,
  MessagingProductSchema,
  mediaLimitFor,
  NetworkErrorCode,
} from '../domain/wire.ts';
import { putMedia } from '../store/media-store.ts';
import { numberNowMs, numberNowSeconds, type SandboxState } from '../store/store.ts';
import { networkAuth, networkRoute, numberOf } from './network-auth.ts';
import { networkSecurity } from './schemas.ts';

const MediaIdParams = z.object({ media_id: z.string().regex(/^\d{1,30}$/) });
const UploadFields = z.object({ messaging_product: MessagingProductSchema, type: z.string().optional() });
const AttachmentQuery = z.object({
  mid: z.string().regex(/^\d{1,30}$/),
  ext: z.coerce.number().int(),
  hash: z.string().regex(/^[0-9a-f]{64}$/),
});

export interface MediaRouteDeps {
  state: SandboxState;
  /** Signs download URLs; private to this sandbox process. */
  urlKey: Buffer;
}

interface UploadParts {
  fields: Record<string, string>;
  file: { data: Buffer; mimeType: string; filename: string } | undefined;
}

async function readParts(parts: AsyncIterableIterator<Multipart>): Promise<UploadParts> {
  const fields: Record<string, string> = {};
  let file: UploadParts['file'];
  for await (const part of parts) {
    if (part.type === 'file') {
      if (part.fieldname !== 'file' || file) {
        await part.toBuffer();
        continue;
      }
      file = { data: await part.toBuffer(), mimeType: part.mimetype, filename: part.filename };
    } else if (typeof part.value === 'string') {
      fields[part.fieldname] = part.value;
    }
  }
  return { fields, file };
}

export function registerMediaRoutes(app: HttpServer, deps: MediaRouteDeps): void {
  const downloadAuth = networkAuth(deps.state, 'media_download');

  app.post(
    '/media',
    networkRoute(deps.state, {
      tags: ['media'],
      summary: 'Upload media',
      description:
        'multipart/form-data with `messaging_product=whatsapp`, the `file` part and optionally `type` (its MIME ' +
        'type). Answers the media id to send by `id`. Unsupported types and oversize files fail with 131053.',
      consumes: ['multipart/form-data'],
      response: { 200: MediaUploadResponseSchema },
    }),
    async (req) => {
      const number = numberOf(req);
      if (!req.isMultipart()) throw failures.invalidParameter('Upload media as multipart/form-data.');
      let parts: UploadParts;
      try {
        parts = await readParts(req.parts());
      } catch (err) {
        throw new NetworkFailure(
          NetworkErrorCode.mediaUploadError,
          err instanceof Error ? err.message : String(err),
        );
      }
      const fields = UploadFields.safeParse(parts.fields);
      if (!fields.success)
        throw failures.missingParameter(
          'The parameter messaging_product is required and must be "whatsapp".',
        );
      if (!parts.file) throw failures.missingParameter('The parameter file is required.');
      const mimeType = baseMimeType(fields.data.type ?? parts.file.mimeType);
      const limit = mediaLimitFor(mimeType);
      if (limit === undefined)
        throw new NetworkFailure(NetworkErrorCode.mediaUploadError, `Unsupported file type ${mimeType}.`);
      if (parts.file.data.length > limit) {
        throw new NetworkFailure(
          NetworkErrorCode.mediaUploadError,
          `The file exceeds the ${limit}-byte limit for ${mimeType}.`,
        );
      }
      if (parts.file.data.length === 0)
        throw new NetworkFailure(NetworkErrorCode.mediaUploadError, 'The file is empty.');
      const media = putMedia(
        number,
        { data: parts.file.data, mimeType, filename: parts.file.filename, origin: 'upload' },
        numberNowMs(deps.state, number),
      );
      return { id: media.id };
    },
  );

  app.get(
    '/:media_id(^\\d{1,30}$)',
    networkRoute(deps.state, {
      tags: ['media'],
      summary: 'Retrieve a media URL',
      description:
        'Metadata and a short-lived `url`. Download it with the same `D360-API-KEY`; against the real provider, ' +
        'request the URL’s path and query from the provider’s own host.',
      params: MediaIdParams,
      response: { 200: MediaInfoSchema },
    }),
    async (req) => {
      const number = numberOf(req);
      const media = number.media.get(req.params.media_id);
      if (!media) throw failures.notFound(req.params.media_id);
      const base = deps.state.settings.publicUrl ?? `${req.protocol}://${req.host}`;
      const expiresAt = numberNowSeconds(deps.state, number) + deps.state.settings.mediaUrlTtlSeconds;
      return {
        messaging_product: 'whatsapp' as const,
        url: mediaDownloadUrl(base, deps.urlKey, media.id, expiresAt),
        mime_type: media.mimeType,
        sha256: media.sha256,
        file_size: media.data.length,
        id: media.id,
      };
    },
  );

  app.get(
    ATTACHMENT_PATH,
    {
      preValidation: downloadAuth,
      schema: {
        tags: ['media'],
        summary: 'Download media',
        description:
          'The URL `GET /{media_id}` answered, fetched with the API key of the number that owns the media. Answers ' +
          'the raw bytes; an unknown or expired URL is a 404 Cloud API error.',
        security: networkSecurity,
        querystring: AttachmentQuery,
      },
    },
    async (req, reply) => {
      const number = numberOf(req);
      const { mid, ext, hash } = req.query;
      const media = number.media.get(mid);
      if (!media || !mediaUrlValid(deps.urlKey, mid, ext, hash, numberNowSeconds(deps.state, number))) {
        throw new NetworkFailure(
          NetworkErrorCode.invalidParameter,
          'The media URL is unknown or has expired.',
          {
            status: 404,
          },
        );
      }
      return reply.type(media.mimeType).header('content-length', String(media.data.length)).send(media.data);
    },
  );

  app.delete(
    '/:media_id(^\\d{1,30}$)',
    networkRoute(deps.state, {
      tags: ['media'],
      summary: 'Delete media',
      params: MediaIdParams,
      response: { 200: MediaDeleteResponseSchema },
    }),
    async (req) => {
      const number = numberOf(req);
      if (!number.media.delete(req.params.media_id)) throw failures.notFound(req.params.media_id);
      return { success: true };
    },
  );
}
