import { PassThrough, type Readable } from 'node:stream';
import fastifyMultipart from '@fastify/multipart';
import { type HeaderSigner, type HttpServer, InboxErrorSchema } from '@switchboard/kit';
import {
  baseMimeType,
  MEDIA_UPLOADER_HEADER,
  MediaFileSchema,
  type MediaUploader,
  MediaUploaderSchema,
  ServiceError,
} from '@switchboard/proto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import type { MediaStorage } from '../adapters/storage.ts';
import type { MediaDatabase } from '../db.ts';
import { contentDisposition, mediaFileView } from '../domain/media-file.ts';
import { defaultFileName, type MediaLimits } from '../domain/media-kind.ts';
import { servedType } from '../domain/served-type.ts';
import { ingestMedia } from '../use-cases/ingest.ts';
import { createFileCache, retrieveMedia } from '../use-cases/retrieve.ts';

/** How long a gateway signature on the uploader stays good: one request's way, with clock skew. */
const UPLOADER_MAX_AGE_MS = 5 * 60_000;
const FILE_PART = 'file_encoded';
const MIME_TOKEN = /^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,63}$/;
/** What the multipart parser reads at most: the file, a few other files, some fields. */
const MULTIPART_LIMITS = { files: 4, fields: 16, parts: 20 } as const;

export interface MediaRouteDeps {
  db: Kysely<MediaDatabase>;
  storage: MediaStorage;
  limits: MediaLimits;
  publicUrl: string;
  uploaderSigner: HeaderSigner;
  /** The time a whole upload may take (`MEDIA_UPLOAD_TIMEOUT`). */
  uploadTimeoutMs: number;
}

/** The uploader the gateway authenticated; uploads that did not come through it are refused. */
function uploaderOf(req: FastifyRequest, signer: HeaderSigner, now = Date.now()): MediaUploader {
  const header = req.headers[MEDIA_UPLOADER_HEADER];
  const payload = typeof header === 'string' ? signer.verify(header) : undefined;
  let parsed: MediaUploader | undefined;
  try {
    const checked = payload === undefined ? undefined : MediaUploaderSchema.safeParse(JSON.parse(payload));
    parsed = checked?.success ? checked.data : undefined;
  } catch {
    parsed = undefined;
  }
  if (!parsed || Math.abs(now - parsed.at) > UPLOADER_MAX_AGE_MS) {
    throw new ServiceError('permission_denied', 'Upload media through the inbox API.');
  }
  return parsed;
}

/**
 * Why the multipart parser stopped: too many parts, or a body that is not well-formed multipart
 * (no boundary, cut short). The client's mistake, never the service's.
 */
function multipartRefusal(err: unknown): unknown {
  const code = typeof err === 'object' && err !== null && 'code' in err ? err.code : undefined;
  // Past the largest kind's limit: the parser's own 413, as before.
  if (code === 'FST_REQ_FILE_TOO_LARGE') return err;
  if (code === 'FST_FILES_LIMIT' || code === 'FST_FIELDS_LIMIT' || code === 'FST_PARTS_LIMIT')
    return ServiceError.validation(
      {
        [FILE_PART]: [
          `Too many parts: send the file with at most ${MULTIPART_LIMITS.files - 1} other files, ` +
            `${MULTIPART_LIMITS.fields} fields and ${MULTIPART_LIMITS.parts} parts in all.`,
        ],
      },
      'The multipart body has too many parts.',
    );
  const reason = err instanceof Error ? err.message : String(err);
  return ServiceError.validation(
    { [FILE_PART]: [`The multipart body is malformed: ${reason.slice(0, 200)}`] },
    'The multipart body is malformed.',
  );
}

/** Bytes of a refused upload read and dropped so the client sees the answer; beyond, the connection closes. */
const DRAIN_LIMIT = 128 * 1024 * 1024;

/** Reads what is left of a request body, up to `limit` bytes; true when it ended. */
function drain(body: Readable, limit: number): Promise<boolean> {
  return new Promise((resolve) => {
    let seen = 0;
    const done = (ended: boolean) => {
      body.off('data', onData).off('end', onEnd).off('error', onError);
      if (!ended) body.pause();
      resolve(ended);
    };
    const onData = (chunk: Buffer) => {
      seen += chunk.length;
      if (seen > limit) done(false);
    };
    const onEnd = () => done(true);
    const onError = () => done(false);
    body.on('data', onData).on('end', onEnd).on('error', onError);
    body.resume();
  });
}

/**
 * An upload may be answered before its body was read to the end (a refusal: a Content-Length
 * over the limit, the bytes of the wrong type; or a stored file followed by parts past the
 * parser's limits): the rest is read and dropped first, so the client (the gateway) gets the
 * answer rather than a broken pipe, and the connection stays usable.
 */
async function finishUpload(req: FastifyRequest, reply: FastifyReply): Promise<void> {
  const raw = req.raw;
  if (raw.readableEnded || raw.destroyed) return;
  raw.unpipe();
  if (!(await drain(raw, DRAIN_LIMIT))) reply.header('connection', 'close');
}

/**
 * A raw upload's body, through a pass-through: a refused body is then dropped (drained), not
 * destroyed with the connection it came on. `pipe` does not pass on a request that ends
 * early (the client went away): the pass-through would wait for more bytes forever, and the
 * chunks already stored would never be removed. It fails instead, so the upload is undone.
 */
function bodyOf(raw: FastifyRequest['raw']): PassThrough {
  const body = raw.pipe(new PassThrough());
  raw.once('close', () => {
    if (!raw.readableEnded)
      body.destroy(
        ServiceError.validation({ [FILE_PART]: ['The upload ended before the whole body arrived.'] }),
      );
  });
  return body;
}

function contentLength(req: FastifyRequest): number | undefined {
  const v = Number(req.headers['content-length']);
  return Number.isFinite(v) && v >= 0 ? v : undefined;
}

/** The media service's HTTP API; the gateway forwards `media/` and `media/{id}/` here. */
export async function registerMediaRoutes(app: HttpServer, deps: MediaRouteDeps): Promise<void> {
  const largest = Math.max(...Object.values(deps.limits));
  const files = createFileCache();
  await app.register(fastifyMultipart, {
    limits: { fileSize: largest + 1, ...MULTIPART_LIMITS },
  });
  // A raw upload is read as a stream by the route, whatever its type.
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('*', (_req, _payload, done) => done(null, undefined));

  app.post(
    '/api/v1/media/',
    {
      onSend: finishUpload,
      schema: {
        querystring: z.object({ filename: z.string().min(1).max(240).optional() }),
        response: {
          201: MediaFileSchema,
          400: InboxErrorSchema,
          413: InboxErrorSchema,
          415: InboxErrorSchema,
        },
      },
    },
    async (req, reply) => {
      const uploader = uploaderOf(req, deps.uploaderSigner);
      // The connection goes when the body outlasts its time: it fails, and the chunks stored so
      // far are removed, before any of them could age past the orphan sweep's grace. A body
      // received whole is being stored: that one gets its answer.
      const deadline = setTimeout(() => {
        if (!req.raw.complete) req.raw.destroy();
      }, deps.uploadTimeoutMs);
      try {
        return await upload(req, reply, uploader);
      } finally {
        clearTimeout(deadline);
      }
    },
  );

  /** Stores the file (multipart part `file_encoded`, or the raw body) and answers 201 with it. */
  async function upload(
    req: FastifyRequest<{ Querystring: { filename?: string | undefined } }>,
    reply: FastifyReply,
    uploader: MediaUploader,
  ) {
    const ingest = (
      body: AsyncIterable<Uint8Array>,
      declaredType: string | undefined,
      fileName: string | undefined,
      declaredSize?: number,
    ) =>
      ingestMedia(deps, {
        body,
        declaredType,
        fileName,
        declaredSize,
        // Signed by the gateway with the uploader: a request cannot name its own origin.
        origin: uploader.origin ?? 'upload',
        createdBy: uploader.user_id,
      });

    let row: Awaited<ReturnType<typeof ingestMedia>> | undefined;
    if (req.isMultipart()) {
      let storing = false;
      // The parser failing inside the file (a body cut short) surfaces through the store.
      let bodyBroken: unknown;
      try {
        for await (const part of req.parts()) {
          if (part.type !== 'file') continue;
          if (part.fieldname !== FILE_PART || row) {
            part.file.resume();
            continue;
          }
          storing = true;
          part.file.once('error', (err) => {
            bodyBroken = err;
          });
          row = await ingest(part.file, part.mimetype, part.filename || req.query.filename);
        }
      } catch (err) {
        // With the file stored, whatever follows it is ignored, as any other part is (the
        // rest of the body is read and dropped before the answer, `finishUpload`).
        if (!row) {
          // The file's own refusal (type, size, empty) is answered as such.
          if (err instanceof ServiceError) throw err;
          // The body broke (inside the file or before it): the client's mistake.
          if (bodyBroken !== undefined || !storing) throw multipartRefusal(bodyBroken ?? err);
          // Storing the file failed (NATS, the database): answered as that failure.
          throw err;
        }
      }
      if (!row) {
        throw ServiceError.validation({ [FILE_PART]: ['This field is required.'] }, 'No file was submitted.');
      }
    } else {
      const declared = req.headers['content-type'];
      row = await ingest(
        bodyOf(req.raw),
        declared === undefined ? undefined : baseMimeType(declared),
        req.query.filename,
        contentLength(req),
      );
    }
    // A file just uploaded is usually read soon (the network fetches what is sent by link).
    files.set(row.id, row);
    return reply.status(201).send(mediaFileView(row, deps.publicUrl));
  }

  app.route({
    // HEAD is answered by this handler too (not Fastify's generated one, which reads the bytes
    // to drop them): headers only, the storage untouched.
    method: ['GET', 'HEAD'],
    url: '/api/v1/media/:id/',
    exposeHeadRoute: false,
    schema: {
      params: z.object({ id: z.string().max(100) }),
      querystring: z.object({
        mime_type_type: z.string().regex(MIME_TOKEN).optional(),
        mime_type_subtype: z.string().regex(MIME_TOKEN).optional(),
      }),
    },
    handler: async (req, reply) => {
      const range = req.headers.range;
      const ifNoneMatch = req.headers['if-none-match'];
      const ifRange = typeof req.headers['if-range'] === 'string' ? req.headers['if-range'] : undefined;
      const got = await retrieveMedia(
        { ...deps, files },
        { id: req.params.id, range, ifNoneMatch, ifRange, headersOnly: req.method === 'HEAD' },
      );
      // Anyone with the link may ask for another type: never one a browser runs (HTML, SVG,
      // script) on the inbox's origin. The answer is also sandboxed and never sniffed.
      const served = servedType(got.file.mime_type, {
        type: req.query.mime_type_type,
        subtype: req.query.mime_type_subtype,
      });
      if (!served.ok)
        throw ServiceError.validation({
          mime_type_subtype: [
            `${served.type} is not served: a browser would run it; ask for application/octet-stream.`,
          ],
        });
      const type = served.type;
      const size = Number(got.file.size);
      reply.headers({
        etag: got.etag,
        'cache-control': 'private, max-age=31536000, immutable',
        // Served as stored, never sniffed into something else, and sandboxed if opened.
        'x-content-type-options': 'nosniff',
        'content-security-policy': 'sandbox',
        'accept-ranges': 'bytes',
        'content-disposition': contentDisposition(got.file.file_name ?? defaultFileName(got.file.mime_type)),
      });
      if (got.kind === 'not_modified') return reply.status(304).send();
      reply.type(type);
      if (got.range) {
        reply
          .status(206)
          .header('content-range', `bytes ${got.range.start}-${got.range.end}/${size}`)
          .header('content-length', String(got.range.end - got.range.start + 1));
      } else {
        reply.status(200).header('content-length', String(size));
      }
      return got.body ? reply.send(got.body) : reply.send();
    },
  });
}
