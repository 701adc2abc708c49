import {
  Agent as HttpAgent,
  request as httpRequest,
  type IncomingMessage,
  type OutgoingHttpHeaders,
} from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream';
import { type HeaderSigner, InboxErrorSchema } from '@switchboard/kit';
import { MEDIA_UPLOADER_HEADER, MediaFileSchema, ServiceError } from '@switchboard/proto';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { type Guards, principalOf, security } from '../http/guards.ts';

export interface MediaRouteOptions {
  guards: Guards;
  /** The media service's own HTTP API (loopback or the cluster's service address). */
  mediaUrl: string;
  /** Signs the uploader for the media service, which accepts uploads only with it. */
  uploaderSigner: HeaderSigner;
}

const tags = ['media'];
/** Request headers a retrieval passes on, so ranges and revalidation work end to end. */
const RETRIEVE_HEADERS = ['range', 'if-none-match', 'if-range'] as const;
/** Answer headers passed back to the client as the media service set them. */
const ANSWER_HEADERS = [
  'content-type',
  'content-length',
  'content-range',
  'accept-ranges',
  'etag',
  'cache-control',
  'x-content-type-options',
  'content-security-policy',
  'content-disposition',
] as const;

const MediaIdParam = z.object({
  id: z.string().max(100).describe('The media file’s id (a UUID).'),
});

/** The reply without the route's typed schema: what passes through is the media service's answer. */
function untyped(reply: FastifyReply): FastifyReply {
  return reply;
}

function unavailable(err: unknown): ServiceError {
  return ServiceError.unavailable('media', 'The media service is unavailable; retry later.', { cause: err });
}

function pickHeaders(from: IncomingMessage['headers'], names: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of names) {
    const v = from[name];
    if (typeof v === 'string') out[name] = v;
  }
  return out;
}

/**
 * One request to the media service with Node's own HTTP client, streams both ways (no web-stream
 * conversions on the way): resolves with the answer as soon as its headers arrive, while `body`
 * (the client's upload) may still be flowing.
 */
function forward(
  target: URL,
  agent: HttpAgent,
  opts: { method: string; headers: OutgoingHttpHeaders; body?: Readable },
): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(target, { method: opts.method, headers: opts.headers, agent }, resolve);
    req.on('error', reject);
    if (opts.body) pipeline(opts.body, req, (err) => err && reject(err));
    else req.end();
  });
}

async function readAll(res: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of res) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * `media/` and `media/{id}/`: passed on to the media service, streamed both ways (the gateway
 * holds no file). Uploads are authenticated here and carry the uploader to the media service
 * under the gateway's signature; retrieval needs no token (the id is the capability).
 */
export const mediaRoutes: FastifyPluginAsync<MediaRouteOptions> = async (plugin, deps) => {
  const app = plugin.withTypeProvider<ZodTypeProvider>();
  const base = deps.mediaUrl.replace(/\/+$/, '');
  const agent = base.startsWith('https:')
    ? new HttpsAgent({ keepAlive: true, maxSockets: 256 })
    : new HttpAgent({ keepAlive: true, maxSockets: 256 });
  plugin.addHook('onClose', async () => agent.destroy());
  // The body is the media service's to read: it reaches it as the client's byte stream.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_req, _payload, done) => done(null, undefined));

  app.post(
    '/media/',
    {
      onRequest: deps.guards.requireMessagingUser,
      // A refused upload is answered before its body was read to the end: the connection cannot
      // carry another request after it.
      onSend: async (_req, reply) => {
        if (reply.statusCode >= 400) reply.header('connection', 'close');
      },
      // Body and query are documented here and checked by the media service, which reads them.
      validatorCompiler: () => (value) => ({ value }),
      schema: {
        tags,
        security,
        summary: 'Upload a media file',
        description:
          'multipart/form-data with the file in the part `file_encoded` (the part’s Content-Type names its type), ' +
          'or the raw bytes as the body with their `Content-Type` and an optional `?filename=`. The type is ' +
          'checked against the bytes (415 `unsupported_media_type` when they disagree or the network does not ' +
          'take the type); the size limit per kind follows the network (image 5 MB, audio and video 16 MB, ' +
          'sticker 500 KB, document 100 MB; 413 `payload_too_large` with `limit`). The same bytes are stored ' +
          'once. `file` is the URL to read it from (and to send it by as `<type>.link`). Anyone who may message ' +
          'may upload; the configurator may not.',
        consumes: ['multipart/form-data', 'application/octet-stream'],
        querystring: z.object({
          filename: z.string().min(1).max(240).optional().describe('The file’s name, for a raw body.'),
        }),
        body: z.object({ file_encoded: z.file().describe('The file.') }),
        response: {
          201: MediaFileSchema,
          400: InboxErrorSchema,
          403: InboxErrorSchema,
          413: InboxErrorSchema,
          415: InboxErrorSchema,
        },
      },
    },
    async (req, reply) => {
      const principal = principalOf(req);
      const uploader = deps.uploaderSigner.sign(
        JSON.stringify({ user_id: principal.user_id, role: principal.role, at: Date.now() }),
      );
      const query = req.url.includes('?') ? req.url.slice(req.url.indexOf('?')) : '';
      let status: number;
      let body: unknown;
      try {
        const res = await forward(new URL(`${base}/api/v1/media/${query}`), agent, {
          method: 'POST',
          headers: {
            ...pickHeaders(req.headers, ['content-type', 'content-length', 'transfer-encoding']),
            [MEDIA_UPLOADER_HEADER]: uploader,
            'x-request-id': req.id,
          },
          body: req.raw,
        });
        status = res.statusCode ?? 502;
        body = JSON.parse(await readAll(res));
      } catch (err) {
        throw unavailable(err);
      }
      // The media service's answer as it is (its errors are the catalogue's already).
      return untyped(reply).status(status).type('application/json').send(JSON.stringify(body));
    },
  );

  /** Passes a retrieval on (GET, or HEAD for the headers alone) and streams the answer back. */
  async function retrieve(req: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply) {
    const query = req.url.includes('?') ? req.url.slice(req.url.indexOf('?')) : '';
    let res: IncomingMessage;
    try {
      // HEAD stays HEAD: the media service then reads no bytes at all.
      const target = new URL(`${base}/api/v1/media/${encodeURIComponent(req.params.id)}/${query}`);
      res = await forward(target, agent, {
        method: req.method === 'HEAD' ? 'HEAD' : 'GET',
        headers: { ...pickHeaders(req.headers, RETRIEVE_HEADERS), 'x-request-id': req.id },
      });
    } catch (err) {
      throw unavailable(err);
    }
    const status = res.statusCode ?? 502;
    const out = untyped(reply).status(status).headers(pickHeaders(res.headers, ANSWER_HEADERS));
    if (req.method === 'HEAD' || status === 304) {
      res.resume();
      return out.send();
    }
    // A stream is not serialized: the bytes go out as the media service streams them.
    return out.send(res);
  }

  // HEAD is declared before GET, so Fastify does not generate its own (which would read the
  // whole file to drop it); it is left out of the document, like every HEAD.
  app.head('/media/:id/', { schema: { hide: true, params: MediaIdParam } }, retrieve);

  app.get(
    '/media/:id/',
    {
      schema: {
        tags,
        summary: 'Retrieve a media file',
        description:
          'The raw bytes; no token needed (the id is the capability: the network fetches this URL when a ' +
          'message links it). `mime_type_type` and `mime_type_subtype` override the answer’s Content-Type. ' +
          'Supports `Range` (one range; 206, or 416 when outside the file) and `If-None-Match` (304); the ' +
          'answer is `Cache-Control: private, max-age=31536000, immutable` (the bytes under an id never ' +
          'change) with the SHA-256 as ETag.',
        params: MediaIdParam,
        querystring: z.object({
          mime_type_type: z.string().max(64).optional().describe('e.g. `image`'),
          mime_type_subtype: z.string().max(64).optional().describe('e.g. `png`'),
        }),
        response: {
          200: z.file().describe('The file’s bytes.'),
          206: z.file().describe('The requested range of the bytes.'),
          304: z.null().describe('Not modified (If-None-Match matched).'),
          404: InboxErrorSchema,
          416: InboxErrorSchema,
        },
      },
    },
    retrieve,
  );
};
