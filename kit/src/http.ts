import { randomUUID } from 'node:crypto';
import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import {
  classifyFailure,
  type ErrorCode,
  errorCatalogue,
  failedDependency,
  ServiceError,
} from '@switchboard/proto';
import Fastify, {
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
} from 'fastify';
import {
  hasZodFastifySchemaValidationErrors,
  isResponseSerializationError,
  jsonSchemaTransform,
  jsonSchemaTransformObject,
  serializerCompiler,
  validatorCompiler,
  type ZodTypeProvider,
} from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { TrustProxy } from './config.ts';
import type { InboxErrorBody } from './errors.ts';
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
  /** Which X-Forwarded-For entries give the client address (behind trusted proxies); see `envTrustProxy`. */
  trustProxy?: TrustProxy;
  /**
   * Refuse, as a validation failure, every request whose validated parts (params, query, body,
   * headers) hold U+0000 or an unpaired surrogate in any string or key: PostgreSQL stores neither
   * (text refuses NUL, jsonb both), so an API backed by it refuses them at the edge instead of
   * failing later.
   */
  refuseUnstorableText?: boolean;
  /**
   * Refuse an empty path parameter (`/webhooks/waba//`) as a validation failure: an empty segment
   * names nothing, whatever the route's own schema allows.
   */
  refuseBlankPathParams?: boolean;
  /** The body of the router's own refusals; the inbox's `{code, reason}` unless an API has its own shape. */
  frameworkErrorBody?: (code: ErrorCode, reason: string) => Record<string, unknown>;
}

/**
 * One access-log line per request instead of Fastify's two: at the default level (info) each
 * line is a write to stdout, and the pair cost the gateway about 20 us of its 85 per network
 * webhook (ingest of 6,000 webhooks, info against error, two runs each). Refusals and failures
 * are logged at warn, so they stay visible on routes whose successes are not logged (route
 * `logLevel: 'warn'`). The query string is left out: it can carry a secret (the network's
 * verify token) or what a user searched for. Fastify's other lines (stream errors, its default
 * error handler, unknown routes) are kept.
 */
class AccessLog extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, req: FastifyRequest, reply: FastifyReply): void {
    const line = {
      method: req.method,
      path: req.url.split('?', 1)[0],
      host: req.host,
      remoteAddress: req.ip,
      statusCode: reply.statusCode,
      responseTime: reply.elapsedTime,
    };
    if (error) reply.log.error({ ...line, err: error }, 'request errored');
    else reply.log[reply.statusCode >= 400 ? 'warn' : 'info'](line, 'request completed');
  }
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
    logController: new AccessLog(),
    return503OnClosing: true,
    routerOptions: { ignoreTrailingSlash: false },
    // The router's own refusals (a path that is not valid UTF-8, a path parameter longer than
    // the router allows) leave in the same body shape, with catalogue codes.
    frameworkErrors: (error, _req, reply) => {
      const code: ErrorCode = error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'uri_too_long' : 'bad_request';
      const reason = code === 'uri_too_long' ? 'A path segment is too long.' : 'The URL is not valid.';
      send(reply, errorCatalogue[code].status, opts.frameworkErrorBody?.(code, reason) ?? { code, reason });
    },
  }).withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(
    opts.refuseUnstorableText || opts.refuseBlankPathParams
      ? edgeValidatorCompiler({
          text: opts.refuseUnstorableText ?? false,
          blankParams: opts.refuseBlankPathParams ?? false,
        })
      : validatorCompiler,
  );
  app.setSerializerCompiler(serializerCompiler);
  app.addHook('onRequest', async (req, reply) => {
    reply.header('x-request-id', req.id);
  });
  return app;
}

/**
 * Deeper JSON than any API shape needs; deeper values overflow the stack of `JSON.stringify`
 * (the bus) and of PostgreSQL's jsonb, so they are refused at the edge.
 */
const MAX_JSON_DEPTH = 64;

/** Where and why a value holds text PostgreSQL cannot store, or nests too deep; the first few places only. */
export function unstorableText(value: unknown, limit = 10): { path: PropertyKey[]; message: string }[] {
  // Iterative, and each entry links to its parent rather than copying its path: a body nested a
  // million levels deep costs linear time and no stack.
  interface At {
    key: PropertyKey;
    parent: At | undefined;
    depth: number;
  }
  const pathOf = (at: At | undefined): PropertyKey[] => {
    const path: PropertyKey[] = [];
    for (let a = at; a; a = a.parent) path.unshift(a.key);
    return path;
  };
  const found: { path: PropertyKey[]; message: string }[] = [];
  const stack: { node: unknown; at: At | undefined }[] = [{ node: value, at: undefined }];
  for (let next = stack.pop(); next && found.length < limit; next = stack.pop()) {
    const { node, at } = next;
    const depth = (at?.depth ?? 0) + 1;
    if (typeof node === 'string') {
      const message = textProblem(node);
      if (message) found.push({ path: pathOf(at), message });
    } else if (node !== null && typeof node === 'object' && depth > MAX_JSON_DEPTH) {
      found.push({ path: pathOf(at), message: `Nested more than ${MAX_JSON_DEPTH} levels deep.` });
    } else if (Array.isArray(node)) {
      node.forEach((item, i) => {
        stack.push({ node: item, at: { key: i, parent: at, depth } });
      });
    } else if (node !== null && typeof node === 'object') {
      for (const [key, item] of Object.entries(node)) {
        // A bad key is reported on the object holding it: the key itself is not a usable field name.
        const message = textProblem(key);
        if (message) found.push({ path: pathOf(at), message });
        stack.push({ node: item, at: { key, parent: at, depth } });
      }
    }
  }
  return found.slice(0, limit);
}

function textProblem(text: string): string | undefined {
  if (text.includes('\0')) return 'Null characters are not allowed.';
  if (text.isWellFormed()) return undefined;
  const isHigh = (unit: number) => unit >= 0xd800 && unit <= 0xdbff;
  const isLow = (unit: number) => unit >= 0xdc00 && unit <= 0xdfff;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (isHigh(unit) && isLow(text.charCodeAt(i + 1))) i++;
    else if (isHigh(unit) || isLow(unit)) {
      return `Surrogate characters are not allowed: U+${unit.toString(16).toUpperCase()}.`;
    }
  }
  return undefined;
}

const StorableText = z.unknown().superRefine((value, ctx) => {
  for (const { path, message } of unstorableText(value)) ctx.addIssue({ code: 'custom', path, message });
});

const NoBlankParams = z.unknown().superRefine((params, ctx) => {
  if (params === null || typeof params !== 'object') return;
  for (const [name, value] of Object.entries(params)) {
    if (value === '') ctx.addIssue({ code: 'custom', path: [name], message: 'This field may not be blank.' });
  }
});

/**
 * The zod validator of each route, behind the edge checks asked for; a check that finds a
 * problem stops the request with its own issues, reported like the route's.
 */
function edgeValidatorCompiler(checks: { text: boolean; blankParams: boolean }): typeof validatorCompiler {
  return (route) => {
    let schema: z.core.$ZodType = route.schema;
    if (checks.blankParams && route.httpPart === 'params') schema = NoBlankParams.pipe(schema);
    if (checks.text) schema = StorableText.pipe(schema);
    return validatorCompiler({ ...route, schema });
  };
}

/** The path of a validation issue as DRF names fields: `text.body`, or `non_field_errors` for the root. */
function fieldName(instancePath: string, context: string | undefined): string {
  const path = instancePath.replace(/^\//, '').split('/').filter(Boolean).join('.');
  if (path) return path;
  return context === 'body' || !context ? 'non_field_errors' : context;
}

export function validationFields(error: FastifyError): Record<string, string[]> {
  if (!hasZodFastifySchemaValidationErrors(error)) return { non_field_errors: [error.message] };
  // A Map, not an object: field names come from the client (`constructor`, `__proto__`…).
  const fields = new Map<string, string[]>();
  for (const v of error.validation) {
    const key = fieldName(v.instancePath, error.validationContext);
    fields.set(key, [...(fields.get(key) ?? []), describeIssue(v.keyword, v.message)]);
  }
  return Object.fromEntries(fields);
}

// zod reports a missing key as a type mismatch against `undefined`; clients expect DRF's wording.
function describeIssue(keyword: string, message: string | undefined): string {
  if (keyword === 'invalid_type' && message?.endsWith('received undefined')) return 'This field is required.';
  return message ?? 'Invalid value.';
}

function send(
  reply: FastifyReply,
  status: number,
  body: InboxErrorBody | Record<string, unknown>,
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
    if (error instanceof ServiceError) {
      // Unexpected failures are logged where they happen; an internal error reaching here
      // from this process is logged now, with its cause.
      if (error.status >= 500 && error.code === 'internal_error')
        req.log.error({ err: error }, 'request failed');
      const body: InboxErrorBody = { ...(error.details ?? {}), code: error.code, reason: error.message };
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
      const fastifyCodes: Record<string, ErrorCode> = {
        FST_ERR_CTP_INVALID_JSON_BODY: 'invalid_json',
        FST_ERR_CTP_EMPTY_JSON_BODY: 'invalid_json',
        FST_ERR_CTP_BODY_TOO_LARGE: 'payload_too_large',
        FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
        FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'invalid_content_length',
      };
      // Only codes of the catalogue leave this handler.
      const code: ErrorCode =
        fastifyCodes[error.code] ??
        (status === 415 ? 'unsupported_media_type' : status === 413 ? 'payload_too_large' : 'bad_request');
      return send(reply, errorCatalogue[code].status, { code, reason: error.message });
    }
    req.log.error({ err: error }, 'request failed');
    // Its database or NATS being down is an outage the client may retry, not a bug.
    const failure = classifyFailure(error);
    if (failure.class === 'transient') {
      const dependency = failedDependency(failure, 'database');
      return send(reply, 503, {
        code: 'service_unavailable',
        reason: `The inbox cannot reach its ${dependency} right now; retry later.`,
        dependency,
      });
    }
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
    // Route schemas refer to registered schemas (`.meta({ id })`) by `$ref`; this puts them in
    // `components.schemas`, keeping only those this document reaches.
    transformObject: (doc) => reachableComponentsOnly(jsonSchemaTransformObject(doc)),
  });
  await app.register(fastifySwaggerUi, {
    routePrefix: opts.docsPrefix,
    uiConfig: { url: opts.jsonPath, deepLinking: true },
    staticCSP: true,
  });
  app.get(opts.jsonPath, { schema: { hide: true } }, async () => app.swagger());
}

/**
 * zod's global registry holds the registered schemas of every module loaded in the process (the
 * sandbox's next to the inbox's in tests, proto's for every service), each as input and output.
 * A document keeps the schemas its paths reach, directly or through other schemas.
 */
export function reachableComponentsOnly<T extends object>(doc: T): T {
  const { schemas: all = {}, ...otherComponents } =
    (doc as { components?: { schemas?: Record<string, unknown> } }).components ?? {};
  const kept = new Set<string>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const item of node) visit(item);
      return;
    }
    if (node === null || typeof node !== 'object') return;
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string' && value.startsWith(SCHEMA_REF)) {
        const name = value.slice(SCHEMA_REF.length).replace(/~1/g, '/').replace(/~0/g, '~');
        if (!kept.has(name) && Object.hasOwn(all, name)) {
          kept.add(name);
          visit(all[name]);
        }
      } else visit(value);
    }
  };
  visit({ ...doc, components: otherComponents });
  const schemas = Object.fromEntries(Object.entries(all).filter(([name]) => kept.has(name)));
  return { ...doc, components: { ...otherComponents, schemas } };
}

const SCHEMA_REF = '#/components/schemas/';
