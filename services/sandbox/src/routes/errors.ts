import type { HttpServer } from '@switchboard/kit';
import type { FastifyError, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors, isResponseSerializationError } from 'fastify-type-provider-zod';
import { failures, httpStatusFor, NetworkFailure } from '../domain/failure.ts';
import { traceId } from '../domain/ids.ts';
import { failureFromIssues, type SchemaIssue, valueAt } from '../domain/validation.ts';
import { type CloudApiErrorBody, NetworkErrorCode } from '../domain/wire.ts';

export function errorBody(failure: NetworkFailure): CloudApiErrorBody & Record<string, unknown> {
  return {
    ...(failure.extra ?? {}),
    error: {
      message: failure.message,
      type: 'OAuthException',
      code: failure.code,
      error_data: { messaging_product: 'whatsapp', details: failure.details },
      fbtrace_id: traceId(),
    },
  };
}

function validatedInput(req: FastifyRequest, context: FastifyError['validationContext']): unknown {
  switch (context) {
    case 'querystring':
      return req.query;
    case 'params':
      return req.params;
    case 'headers':
      return req.headers;
    default:
      return req.body;
  }
}

function issuesOf(error: FastifyError, req: FastifyRequest): SchemaIssue[] {
  if (!hasZodFastifySchemaValidationErrors(error)) return [];
  const input = validatedInput(req, error.validationContext);
  return error.validation.map((v) => {
    const given = v.params.keys;
    const keys = Array.isArray(given) ? given.filter((k): k is string => typeof k === 'string') : undefined;
    const path = v.instancePath.split('/').filter(Boolean);
    return {
      code: v.keyword,
      path,
      message: v.message ?? 'Invalid value.',
      missing: v.keyword !== 'unrecognized_keys' && valueAt(input, path) === undefined,
      ...(keys ? { keys } : {}),
    };
  });
}

function toFailure(
  error: FastifyError,
  req: FastifyRequest,
): { failure: NetworkFailure; status: number } | undefined {
  if (error instanceof NetworkFailure) return { failure: error, status: httpStatusFor(error) };
  if (hasZodFastifySchemaValidationErrors(error)) {
    const failure = failureFromIssues(issuesOf(error, req));
    return { failure, status: httpStatusFor(failure) };
  }
  const status = error.statusCode ?? 500;
  if (status >= 400 && status < 500) {
    return { failure: new NetworkFailure(NetworkErrorCode.invalidParameter, error.message), status };
  }
  return undefined;
}

/**
 * Every failure leaves as the Cloud API's Graph-API error body, with the status the network
 * uses for its code (401 auth, 429 throughput, 400 everything the caller got wrong).
 */
export function installCloudApiErrorHandling(app: HttpServer): void {
  app.setErrorHandler((error: FastifyError, req, reply) => {
    const mapped = toFailure(error, req);
    if (!mapped) {
      if (isResponseSerializationError(error)) req.log.error({ err: error }, 'response failed its schema');
      else req.log.error({ err: error }, 'request failed');
      const failure = new NetworkFailure(NetworkErrorCode.somethingWentWrong);
      return reply.status(500).send(errorBody(failure));
    }
    if (mapped.failure.retryAfterSeconds !== undefined) {
      reply.header('retry-after', String(mapped.failure.retryAfterSeconds));
    }
    return reply.status(mapped.status).send(errorBody(mapped.failure));
  });
  app.setNotFoundHandler((req, reply) => {
    const path = req.url.split('?')[0] ?? req.url;
    reply
      .status(404)
      .send(errorBody(failures.invalidParameter(`Unknown path components: ${req.method} ${path}`)));
  });
}
