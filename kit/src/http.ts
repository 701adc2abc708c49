import { randomUUID } from 'node:crypto';
import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import Fastify, {
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import {
  hasZodFastifySchemaValidationErrors,
  isResponseSerializationError,
  jsonSchemaTransform,
  serializerCompiler,
  validatorCompiler,
  type ZodTypeProvider,
} from 'fastify-type-provider-zod';
import { AppError, type InboxErrorBody } from './errors.ts';
import type { Logger } from './logger.ts';

export type HttpServer = FastifyInstance<
  import('node:http').Server,
  import('node:http').IncomingMessage,
  import('node:http').ServerResponse,
  Logger,
  ZodTypeProvider
>;

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export interface HttpServerOptions {
  logger: Logger;
  /** Upper bound for request bodies (the network posts up to 3 MB). */
  bodyLimit?: number;
  /** Take the client address from X-Forwarded-For (behind a trusted proxy). */
  trustProxy?: boolean;
}

/**
 * A Fastify instance with the zod type provider, request ids (a caller's `X-Request-Id` is
 * kept when well-formed, echoed on every response) and connections closed on shutdown.
 */
export function createHttpServer(opts: HttpServerOptions): HttpServer {
  const app = Fastify({
    loggerInstance: opts.logger,
    bodyLimit: opts.bodyLimit ?? 4 * 1024 * 1024,
    trustProxy: opts.trustProxy ?? false,
    requestIdHeader: false,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    // Idle keep-alive sockets are closed at once on shutdown; in-flight requests finish.
    forceCloseConnections: 'idle',
    return503OnClosing: true,
    routerOptions: { ignoreTrailingSlash: false },
  }).withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.addHook('onRequest', async (req, reply) => {
    reply.header('x-request-id', req.id);
  });
  return app;
}

/** The path of a validation issue as DRF names fields: `text.body`, or `non_field_errors` for the root. */
function fieldName(instancePath: string, context: string | undefined): string {
  const path = instancePath.replace(/^\//, '').split('/').filter(Boolean).join('.');
  if (path) return path;
  return context === 'body' || !context ? 'non_field_errors' : context;
}

export function validationFields(error: FastifyError): Record<string, string[]> {
  const fields: Record<string, string[]> = {};
  if (!hasZodFastifySchemaValidationErrors(error)) return { non_field_errors: [error.message] };
  for (const v of error.validation) {
    const key = fieldName(v.instancePath, error.validationContext);
    const list = fields[key] ?? [];
    list.push(describeIssue(v.keyword, v.message));
    fields[key] = list;
  }
  return fields;
}

// zod reports a missing key as a type mismatch against `undefined`; clients expect DRF's wording.
function describeIssue(keyword: string, message: string | undefined): string {
  if (keyword === 'invalid_type' && message?.endsWith('received undefined')) return 'This field is required.';
  return message ?? 'Invalid value.';
}

function send(
  reply: FastifyReply,
  status: number,
  body: InboxErrorBody,
  headers?: Record<string, string>,
): void {
  if (headers) reply.headers(headers);
  void reply.status(status).send(body);
}

/**
 * The inbox error handler: every failure leaves as `{code, reason, fields?}`. Unknown errors
 * are logged and become a 500 without internals; client mistakes Fastify detects (bad JSON,
 * body too large, wrong content type) keep their 4xx status with a stable code.
 */
export function installInboxErrorHandling(app: HttpServer): void {
  app.setErrorHandler((error: FastifyError, req: FastifyRequest, reply: FastifyReply) => {
    if (error instanceof AppError) {
      const body: InboxErrorBody = { ...(error.extra ?? {}), code: error.code, reason: error.message };
      if (error.fields) body.fields = error.fields;
      return send(reply, error.status, body, error.headers);
    }
    if (hasZodFastifySchemaValidationErrors(error) || error.validation) {
      return send(reply, 400, {
        code: 'validation_error',
        reason: 'The request is not valid.',
        fields: validationFields(error),
      });
    }
    if (isResponseSerializationError(error)) {
      req.log.error({ err: error }, 'response failed its schema');
      return send(reply, 500, { code: 'internal_error', reason: 'The server failed to build the response.' });
    }
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      const code =
        {
          FST_ERR_CTP_INVALID_JSON_BODY: 'invalid_json',
          FST_ERR_CTP_EMPTY_JSON_BODY: 'invalid_json',
          FST_ERR_CTP_BODY_TOO_LARGE: 'payload_too_large',
          FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
          FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'invalid_content_length',
        }[error.code] ??
        (status === 415 ? 'unsupported_media_type' : status === 413 ? 'payload_too_large' : 'bad_request');
      return send(reply, status, { code, reason: error.message });
    }
    req.log.error({ err: error }, 'request failed');
    return send(reply, 500, { code: 'internal_error', reason: 'The server failed to handle the request.' });
  });
  app.setNotFoundHandler((req, reply) => {
    send(reply, 404, { code: 'not_found', reason: `No route for ${req.method} ${req.url.split('?')[0]}.` });
  });
}

export interface OpenApiOptions {
  title: string;
  version: string;
  description: string;
  /** Where the JSON document is served, e.g. `/api/v1/schema/`. */
  jsonPath: string;
  /** Where the human docs page is served, e.g. `/api/v1/docs`. */
  docsPrefix: string;
  securitySchemes?: Record<
    string,
    { type: 'apiKey'; in: 'header'; name: string; description?: string } | { type: 'http'; scheme: string }
  >;
}

/** OpenAPI generated from the zod route schemas, plus a Swagger UI page served from the package (no CDN). */
export async function registerOpenApi(app: HttpServer, opts: OpenApiOptions): Promise<void> {
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: opts.title, version: opts.version, description: opts.description },
      ...(opts.securitySchemes ? { components: { securitySchemes: opts.securitySchemes } } : {}),
    },
    transform: jsonSchemaTransform,
  });
  await app.register(fastifySwaggerUi, {
    routePrefix: opts.docsPrefix,
    uiConfig: { url: opts.jsonPath, deepLinking: true },
    staticCSP: true,
  });
  app.get(opts.jsonPath, { schema: { hide: true } }, async () => app.swagger());
}
