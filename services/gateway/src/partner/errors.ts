import type { HttpServer } from '@switchboard/kit';
import { classifyFailure, ServiceError } from '@switchboard/proto';
import type { FastifyError, FastifyReply } from 'fastify';
import { hasZodFastifySchemaValidationErrors, isResponseSerializationError } from 'fastify-type-provider-zod';
import { z } from 'zod';

/** FastAPI's shapes (the spec's 422): what partners' clients already parse. */
export const ValidationErrorSchema = z
  .object({
    loc: z.array(z.union([z.string(), z.number()])),
    msg: z.string(),
    type: z.string(),
  })
  .meta({ id: 'ValidationError' });

export const HTTPValidationErrorSchema = z.object({ detail: z.array(ValidationErrorSchema) }).meta({
  id: 'HTTPValidationError',
  example: {
    detail: [{ loc: ['body', 'subdomain'], msg: 'Subdomain already in use: acme', type: 'value_error' }],
  },
});

export const HTTPErrorSchema = z
  .object({ detail: z.string() })
  .meta({ id: 'HTTPError', example: { detail: 'Not Found' } });

type ValidationItem = z.infer<typeof ValidationErrorSchema>;

const LOCATION: Record<string, string> = {
  body: 'body',
  querystring: 'query',
  params: 'path',
  headers: 'header',
};

/** A zod issue in FastAPI's (pydantic's) words: `missing`, `string_type`, `value_error`, … */
function describe(
  keyword: string,
  message: string,
  params: Record<string, unknown>,
): { msg: string; type: string } {
  if (keyword === 'invalid_type') {
    if (message.endsWith('received undefined')) return { msg: 'Field required', type: 'missing' };
    const expected = typeof params.expected === 'string' ? params.expected : 'value';
    return {
      msg: `Input should be a valid ${expected}`,
      type: `${expected === 'number' ? 'int' : expected}_type`,
    };
  }
  if (keyword === 'too_big')
    return { msg: message, type: params.origin === 'string' ? 'string_too_long' : 'less_than_equal' };
  if (keyword === 'too_small')
    return { msg: message, type: params.origin === 'string' ? 'string_too_short' : 'greater_than_equal' };
  if (keyword === 'invalid_format') return { msg: message, type: 'string_pattern_mismatch' };
  if (keyword === 'custom') return { msg: `Value error, ${message}`, type: 'value_error' };
  return { msg: message, type: keyword };
}

export function validationItems(error: FastifyError): ValidationItem[] {
  const where = LOCATION[error.validationContext ?? 'body'] ?? 'body';
  if (!hasZodFastifySchemaValidationErrors(error))
    return [{ loc: [where], msg: error.message, type: 'value_error' }];
  return error.validation.map((v) => {
    const path = v.instancePath
      .split('/')
      .filter(Boolean)
      .map((p) => (/^\d+$/.test(p) ? Number(p) : p));
    return { loc: [where, ...path], ...describe(v.keyword, v.message ?? 'Invalid value', v.params) };
  });
}

function detail(reply: FastifyReply, status: number, text: string, headers?: Record<string, string>): void {
  if (headers) reply.headers(headers);
  void reply.status(status).send({ detail: text });
}

/**
 * The partner API's one error handler: 422 `{"detail":[{loc,msg,type}]}` for validation
 * (the provisioner's own refusals, such as a subdomain in use, included), `{"detail":"…"}`
 * otherwise, never internals.
 */
export function installPartnerErrorHandling(app: HttpServer): void {
  app.setErrorHandler((error: FastifyError, req, reply) => {
    if (error instanceof ServiceError) {
      if (error.code === 'validation_error') {
        const items = Object.entries(error.fields ?? {}).flatMap(([field, msgs]) =>
          msgs.map((msg) => ({ loc: ['body', field], msg, type: 'value_error' })),
        );
        return reply.status(422).send({
          detail: items.length ? items : [{ loc: ['body'], msg: error.message, type: 'value_error' }],
        });
      }
      if (error.status >= 500) req.log.error({ err: error }, 'partner request failed');
      if (error.code === 'not_found') return detail(reply, 404, 'Not Found');
      return detail(reply, error.status, error.message, error.headers);
    }
    if (hasZodFastifySchemaValidationErrors(error) || error.validation) {
      return reply.status(422).send({ detail: validationItems(error) });
    }
    if (error.code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
      return reply
        .status(422)
        .send({ detail: [{ loc: ['body', 0], msg: 'JSON decode error', type: 'json_invalid' }] });
    }
    if (error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY') {
      return reply.status(422).send({ detail: [{ loc: ['body'], msg: 'Field required', type: 'missing' }] });
    }
    if (isResponseSerializationError(error)) {
      req.log.error({ err: error }, 'response failed its schema');
      return detail(reply, 500, 'Internal Server Error');
    }
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) return detail(reply, status, error.message);
    req.log.error({ err: error }, 'partner request failed');
    if (classifyFailure(error).class === 'transient')
      return detail(reply, 503, 'Service Unavailable; retry later.');
    return detail(reply, 500, 'Internal Server Error');
  });
  app.setNotFoundHandler((_req, reply) => detail(reply, 404, 'Not Found'));
}
