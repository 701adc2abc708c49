import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import pRetry from 'p-retry';
import { type Dispatcher, FormData, Pool, errors as undiciErrors } from 'undici';
import { z } from 'zod';
import { issuesText } from '../issues.ts';
import { parseRetryAfter } from '../retry-after.ts';
import { BlockUsersRequestSchema, type BlockUsersResponse, BlockUsersResponseSchema } from './block-users.ts';
import { CloudApiErrorBodySchema, NetworkError } from './errors.ts';
import {
  type MediaDeleteResponse,
  MediaDeleteResponseSchema,
  type MediaInfo,
  MediaInfoSchema,
  type MediaUploadInput,
  MediaUploadInputSchema,
  type MediaUploadResponse,
  MediaUploadResponseSchema,
} from './media.ts';
import {
  type OutboundMessageInput,
  OutboundMessageSchema,
  type SendMessageResponse,
  SendMessageResponseSchema,
} from './outbound.ts';
import {
  type TemplateList,
  type TemplateListQuery,
  TemplateListQuerySchema,
  TemplateListSchema,
} from './templates.ts';
import {
  type SetWebhookRequest,
  SetWebhookRequestSchema,
  type WebhookConfig,
  WebhookConfigSchema,
} from './webhook-config.ts';

/** The provider's Cloud API proxy; the sandbox serves the same paths. */
export const PROVIDER_BASE_URL = 'https://waba-v2.360dialog.io';
export const API_KEY_HEADER = 'D360-API-KEY';

export interface NetworkRetryEvent {
  readonly operation: string;
  /** The attempt that failed (1 for the first). */
  readonly attempt: number;
  /** How long the client waits before the next attempt (backoff, or Retry-After when longer). */
  readonly delayMs: number;
  readonly error: NetworkError;
}

export interface NetworkClientOptions {
  /** `https://waba-v2.360dialog.io` for the provider, the sandbox's URL in development and tests. */
  baseUrl: string;
  /** The provider API key of the business number, sent as `D360-API-KEY`. */
  apiKey: string;
  /** Retries after the first attempt for 429, 5xx and connection failures. Default 4. */
  retries?: number;
  /** First backoff delay; doubles (with jitter) per retry. Default 500 ms. */
  minRetryDelayMs?: number;
  /** Longest wait between attempts, also the ceiling for Retry-After. Default 30 s. */
  maxRetryDelayMs?: number;
  /** Time allowed for the response headers, and between body chunks. Default 30 s. */
  timeoutMs?: number;
  /** Concurrent connections to the network. Default 16. */
  connections?: number;
  /** Largest media download accepted. Default 100 MB, the network's own ceiling. */
  maxDownloadBytes?: number;
  onRetry?: (event: NetworkRetryEvent) => void;
}

export interface DownloadedMedia {
  readonly data: Buffer;
  readonly contentType: string;
  /** Hex SHA-256 of the bytes, to compare with the `sha256` the network announced. */
  readonly sha256: string;
}

/** A download as a stream: the caller reads it (and hashes it) as it arrives. */
export interface MediaDownloadStream {
  readonly body: Readable;
  readonly contentType: string;
  /** From `Content-Length`, when the network sent it. */
  readonly size: number | undefined;
}

/** Bytes to upload without holding them: `open` is called once per attempt. */
export interface MediaUploadStreamInput {
  open(): Promise<Readable>;
  mimeType: string;
  filename?: string | undefined;
}

/** Typed access to the provider's Cloud API for one business number. */
export interface NetworkClient {
  readonly baseUrl: string;
  sendMessage(message: OutboundMessageInput): Promise<SendMessageResponse>;
  uploadMedia(file: MediaUploadInput): Promise<MediaUploadResponse>;
  /** The media's metadata and a short-lived URL to pass to `downloadMedia`. */
  getMediaUrl(mediaId: string): Promise<MediaInfo>;
  /** Downloads a URL from `getMediaUrl` through the provider, with the API key. */
  downloadMedia(url: string): Promise<DownloadedMedia>;
  /**
   * Like `downloadMedia`, but one attempt and streamed: the bytes are never all in memory. A
   * failed download is retried by asking `getMediaUrl` again (its URLs expire).
   */
  downloadMediaStream(url: string): Promise<MediaDownloadStream>;
  /** Like `uploadMedia`, streaming the bytes from `open()` (once per attempt). */
  uploadMediaStream(file: MediaUploadStreamInput): Promise<MediaUploadResponse>;
  deleteMedia(mediaId: string): Promise<MediaDeleteResponse>;
  listTemplates(query?: TemplateListQuery): Promise<TemplateList>;
  /** Partial failures are returned (see `failed_users`), not thrown. */
  blockUsers(users: readonly string[]): Promise<BlockUsersResponse>;
  unblockUsers(users: readonly string[]): Promise<BlockUsersResponse>;
  setWebhook(config: SetWebhookRequest): Promise<WebhookConfig>;
  close(): Promise<void>;
}

interface Call {
  readonly operation: string;
  readonly method: Dispatcher.HttpMethod;
  readonly path: string;
  readonly query?: Record<string, string | number>;
  /** What the call expects back; JSON unless it downloads bytes. */
  readonly accept?: string;
  readonly json?: unknown;
  /** Built per attempt: a multipart body is a stream and cannot be replayed. */
  readonly form?: () => FormData;
  /** A streamed body with its content type, built per attempt. */
  readonly stream?: () => Promise<{ body: AsyncIterable<Uint8Array>; contentType: string }>;
  /** An error status whose body is still the answer (block_users reports partial failures as 400). */
  readonly answerOnError?: (status: number, body: unknown) => boolean;
}

interface RawResponse {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: Buffer;
}

const ENCODED_MEDIA_ID = /^[A-Za-z0-9_.-]{1,100}$/;

function header(headers: RawResponse['headers'], name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  if (text.length === 0) return { ok: false };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

function transportError(operation: string, attempt: number, err: unknown): NetworkError {
  const timeout =
    err instanceof undiciErrors.HeadersTimeoutError ||
    err instanceof undiciErrors.BodyTimeoutError ||
    err instanceof undiciErrors.ConnectTimeoutError;
  // A closed client or a malformed request will fail the same way on every attempt.
  const permanent =
    err instanceof undiciErrors.ClientClosedError ||
    err instanceof undiciErrors.ClientDestroyedError ||
    err instanceof undiciErrors.InvalidArgumentError;
  const reason = err instanceof Error ? err.message : String(err);
  return new NetworkError({
    kind: permanent ? 'invalid_request' : timeout ? 'timeout' : 'connection',
    operation,
    attempt,
    message: `${operation}: ${timeout ? 'timed out' : 'no answer from the network'} (${reason})`,
    cause: err,
  });
}

function apiError(operation: string, attempt: number, res: RawResponse): NetworkError {
  const text = res.body.toString('utf8');
  const json = parseJson(text);
  const parsed = json.ok ? CloudApiErrorBodySchema.safeParse(json.value) : undefined;
  const retryAfterMs = parseRetryAfter(header(res.headers, 'retry-after'));
  const common = {
    kind: 'api' as const,
    operation,
    attempt,
    status: res.status,
    body: json.ok ? json.value : text.slice(0, 2000),
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  };
  if (!parsed?.success) {
    return new NetworkError({
      ...common,
      message: `${operation}: HTTP ${res.status} without a Cloud API error body`,
    });
  }
  const e = parsed.data.error;
  return new NetworkError({
    ...common,
    message: `${operation}: ${e.message}`,
    code: e.code,
    type: e.type,
    ...(e.error_subcode === undefined ? {} : { subcode: e.error_subcode }),
    ...(e.error_data?.details === undefined ? {} : { details: e.error_data.details }),
    ...(e.fbtrace_id === undefined ? {} : { fbtraceId: e.fbtrace_id }),
  });
}

/** Quotes a multipart parameter value (RFC 7578 §4.2: quotes and line breaks escaped). */
function quoted(value: string): string {
  return `"${value.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A')}"`;
}

/** A multipart/form-data body of the upload fields and the file, streamed from `file`. */
async function* multipartUpload(
  boundary: string,
  fields: Record<string, string>,
  file: { body: Readable; filename: string; mimeType: string },
): AsyncGenerator<Uint8Array> {
  for (const [name, value] of Object.entries(fields)) {
    yield Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name=${quoted(name)}\r\n\r\n${value}\r\n`,
    );
  }
  yield Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename=${quoted(file.filename)}\r\n` +
      `Content-Type: ${file.mimeType}\r\n\r\n`,
  );
  for await (const chunk of file.body) yield chunk as Uint8Array;
  yield Buffer.from(`\r\n--${boundary}--\r\n`);
}

/**
 * A client for one business number on the provider's Cloud API (or the sandbox, which serves
 * the same paths): requests and answers are checked against the zod schemas, 429/5xx and lost
 * connections are retried with backoff (Retry-After wins when longer), other 4xx are not.
 */
export function createNetworkClient(options: NetworkClientOptions): NetworkClient {
  const base = new URL(options.baseUrl);
  if (base.protocol !== 'https:' && base.protocol !== 'http:') {
    throw new Error(`network base URL must be http(s): ${options.baseUrl}`);
  }
  const basePath = base.pathname.replace(/\/+$/, '');
  const retries = options.retries ?? 4;
  const minRetryDelayMs = options.minRetryDelayMs ?? 500;
  const maxRetryDelayMs = options.maxRetryDelayMs ?? 30_000;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const maxDownloadBytes = options.maxDownloadBytes ?? 100 * 1024 * 1024;
  const pool = new Pool(base.origin, {
    connections: options.connections ?? 16,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    connect: { timeout: Math.min(timeoutMs, 10_000) },
    maxResponseSize: maxDownloadBytes,
  });

  async function send(call: Call, attempt: number): Promise<RawResponse> {
    const headers: Record<string, string> = {
      [API_KEY_HEADER]: options.apiKey,
      accept: call.accept ?? 'application/json',
    };
    let body: string | FormData | Readable | undefined;
    if (call.stream) {
      const streamed = await call.stream();
      headers['content-type'] = streamed.contentType;
      body = Readable.from(streamed.body);
    } else if (call.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(call.json);
    } else if (call.form) {
      body = call.form();
    }
    try {
      const res = await pool.request({
        method: call.method,
        path: `${basePath}${call.path}`,
        headers,
        ...(body === undefined ? {} : { body }),
        ...(call.query ? { query: call.query } : {}),
      });
      const bytes = Buffer.from(await res.body.arrayBuffer());
      return { status: res.statusCode, headers: res.headers, body: bytes };
    } catch (err) {
      throw transportError(call.operation, attempt, err);
    }
  }

  async function withRetries<T>(operation: string, run: (attempt: number) => Promise<T>): Promise<T> {
    return pRetry(run, {
      retries,
      minTimeout: minRetryDelayMs,
      maxTimeout: maxRetryDelayMs,
      factor: 2,
      randomize: true,
      shouldRetry: ({ error }) => error instanceof NetworkError && error.retryable,
      onFailedAttempt: async ({ error, attemptNumber, retriesLeft, retryDelay }) => {
        if (!(error instanceof NetworkError) || !error.retryable || retriesLeft === 0) return;
        const wanted = Math.min(error.retryAfterMs ?? 0, maxRetryDelayMs);
        const extra = Math.max(0, wanted - retryDelay);
        options.onRetry?.({ operation, attempt: attemptNumber, delayMs: retryDelay + extra, error });
        if (extra > 0) await sleep(extra);
      },
    });
  }

  /** Sends the call with retries and returns its JSON answer checked against `schema`. */
  async function json<S extends z.ZodType>(call: Call, schema: S): Promise<z.output<S>> {
    return withRetries(call.operation, async (attempt) => {
      const res = await send(call, attempt);
      const ok = res.status >= 200 && res.status < 300;
      const parsedBody = parseJson(res.body.toString('utf8'));
      if (!ok && !(parsedBody.ok && call.answerOnError?.(res.status, parsedBody.value))) {
        throw apiError(call.operation, attempt, res);
      }
      const checked = parsedBody.ok ? schema.safeParse(parsedBody.value) : undefined;
      if (!checked?.success) {
        throw new NetworkError({
          kind: 'invalid_response',
          operation: call.operation,
          attempt,
          status: res.status,
          body: parsedBody.ok ? parsedBody.value : res.body.toString('utf8').slice(0, 2000),
          message: `${call.operation}: the answer does not match the Cloud API schema${
            checked ? ` (${issuesText(checked.error.issues)})` : ' (not JSON)'
          }`,
        });
      }
      return checked.data;
    });
  }

  function checked<S extends z.ZodType>(operation: string, schema: S, value: unknown): z.output<S> {
    const parsed = schema.safeParse(value);
    if (parsed.success) return parsed.data;
    throw new NetworkError({
      kind: 'invalid_request',
      operation,
      message: `${operation}: the request breaks the Cloud API schema (${issuesText(parsed.error.issues)})`,
      details: issuesText(parsed.error.issues),
    });
  }

  function mediaPath(operation: string, mediaId: string): string {
    if (!ENCODED_MEDIA_ID.test(mediaId)) {
      throw new NetworkError({
        kind: 'invalid_request',
        operation,
        message: `${operation}: invalid media id`,
      });
    }
    return `/${mediaId}`;
  }

  function blockCall(operation: string, method: 'POST' | 'DELETE', users: readonly string[]): Call {
    const body = checked(operation, BlockUsersRequestSchema, {
      messaging_product: 'whatsapp',
      block_users: users.map((user) => ({ user })),
    });
    return {
      operation,
      method,
      path: '/block_users',
      json: body,
      answerOnError: (status, value) => status === 400 && BlockUsersResponseSchema.safeParse(value).success,
    };
  }

  return {
    baseUrl: base.toString(),

    async sendMessage(message) {
      // A retried send after a 5xx or a lost answer may deliver twice: the network gives no
      // idempotency key, so the caller's outbound command is where duplicates are contained.
      const body = checked('sendMessage', OutboundMessageSchema, {
        messaging_product: 'whatsapp',
        ...message,
      });
      return json(
        { operation: 'sendMessage', method: 'POST', path: '/messages', json: body },
        SendMessageResponseSchema,
      );
    },

    async uploadMedia(file) {
      const input = checked('uploadMedia', MediaUploadInputSchema, file);
      return json(
        {
          operation: 'uploadMedia',
          method: 'POST',
          path: '/media',
          form: () => {
            const form = new FormData();
            form.set('messaging_product', 'whatsapp');
            form.set('type', input.mimeType);
            form.set('file', new Blob([input.data], { type: input.mimeType }), input.filename ?? 'file');
            return form;
          },
        },
        MediaUploadResponseSchema,
      );
    },

    async getMediaUrl(mediaId) {
      return json(
        { operation: 'getMediaUrl', method: 'GET', path: mediaPath('getMediaUrl', mediaId) },
        MediaInfoSchema,
      );
    },

    async downloadMedia(url) {
      const operation = 'downloadMedia';
      const target = checked(operation, z.url({ protocol: /^https?$/ }), url);
      // The provider proxies Meta's media host: the path and query of Meta's URL are requested
      // from the provider's own host, authenticated with the API key.
      const parsed = new URL(target);
      const call: Call = {
        operation,
        method: 'GET',
        path: `${parsed.pathname}${parsed.search}`,
        accept: '*/*',
      };
      return withRetries(operation, async (attempt) => {
        const res = await send(call, attempt);
        if (res.status !== 200) throw apiError(operation, attempt, res);
        return {
          data: res.body,
          contentType: header(res.headers, 'content-type') ?? 'application/octet-stream',
          sha256: createHash('sha256').update(res.body).digest('hex'),
        };
      });
    },

    async downloadMediaStream(url) {
      const operation = 'downloadMedia';
      const target = new URL(checked(operation, z.url({ protocol: /^https?$/ }), url));
      let res: Dispatcher.ResponseData;
      try {
        res = await pool.request({
          method: 'GET',
          path: `${basePath}${target.pathname}${target.search}`,
          headers: { [API_KEY_HEADER]: options.apiKey, accept: '*/*' },
        });
      } catch (err) {
        throw transportError(operation, 1, err);
      }
      if (res.statusCode !== 200) {
        const bytes = Buffer.from(await res.body.arrayBuffer());
        throw apiError(operation, 1, { status: res.statusCode, headers: res.headers, body: bytes });
      }
      const length = Number(header(res.headers, 'content-length'));
      return {
        body: res.body,
        contentType: header(res.headers, 'content-type') ?? 'application/octet-stream',
        size: Number.isFinite(length) ? length : undefined,
      };
    },

    async uploadMediaStream(file) {
      const operation = 'uploadMedia';
      const mimeType = checked(operation, MediaUploadInputSchema.shape.mimeType, file.mimeType);
      return json(
        {
          operation,
          method: 'POST',
          path: '/media',
          stream: async () => {
            const boundary = `switchboard-${randomBytes(12).toString('hex')}`;
            const body = multipartUpload(
              boundary,
              { messaging_product: 'whatsapp', type: mimeType },
              { body: await file.open(), filename: file.filename ?? 'file', mimeType },
            );
            return { body, contentType: `multipart/form-data; boundary=${boundary}` };
          },
        },
        MediaUploadResponseSchema,
      );
    },

    async deleteMedia(mediaId) {
      return json(
        { operation: 'deleteMedia', method: 'DELETE', path: mediaPath('deleteMedia', mediaId) },
        MediaDeleteResponseSchema,
      );
    },

    async listTemplates(query = {}) {
      const q = checked('listTemplates', TemplateListQuerySchema, query);
      const params: Record<string, number> = {};
      if (q.limit !== undefined) params.limit = q.limit;
      if (q.offset !== undefined) params.offset = q.offset;
      return json(
        { operation: 'listTemplates', method: 'GET', path: '/v1/configs/templates', query: params },
        TemplateListSchema,
      );
    },

    async blockUsers(users) {
      return json(blockCall('blockUsers', 'POST', users), BlockUsersResponseSchema);
    },

    async unblockUsers(users) {
      return json(blockCall('unblockUsers', 'DELETE', users), BlockUsersResponseSchema);
    },

    async setWebhook(config) {
      const body = checked('setWebhook', SetWebhookRequestSchema, config);
      return json(
        { operation: 'setWebhook', method: 'POST', path: '/v1/configs/webhook', json: body },
        WebhookConfigSchema,
      );
    },

    async close() {
      await pool.close();
    },
  };
}
