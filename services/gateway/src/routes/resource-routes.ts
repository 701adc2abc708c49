import { page, pageOf } from '@switchboard/kit';
import type { Principal, RpcContract } from '@switchboard/proto';
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { IdText } from '../domain/schemas.ts';
import { type GuardHook, type Guards, principalOf, security } from '../http/guards.ts';
import { callService } from './bus-call.ts';
import type { ServiceRouteOptions } from './messaging-views.ts';

/** A contract asked with the caller's principal and `Fields` (the service checks the principal again). */
type AsCaller<Fields, Answer = unknown> = RpcContract<
  z.ZodType<unknown, { principal: Principal } & Fields>,
  z.ZodType<Answer>
>;

/** What the OpenAPI document says of one route. */
interface Docs {
  summary: string;
  description?: string;
}

/**
 * A collection a service owns that the gateway relays as REST: `GET path` (a page), `POST path`,
 * and `GET`, `PATCH`, `DELETE path:id/`. Each operation is optional; those given are registered
 * in that order.
 */
export interface ResourceSpec {
  /** The collection, e.g. `/tags/`. */
  path: string;
  tags: string[];
  /** Who may use any of its routes. */
  guard: (guards: Guards) => GuardHook;
  /** What the service answers for one item. */
  item: z.ZodType;
  list?: Docs & {
    /** `Pagination`, extended with the list's filters: they are passed on as given, absent or empty ones left out. */
    query: z.ZodType<{ limit: number; offset: number }>;
    contract: AsCaller<{ limit: number; offset: number }, { count: number; results: unknown[] }>;
  };
  create?: Docs & {
    body: z.ZodType;
    /** The request field that carries the body (`tag`, `provider`, …). */
    field: string;
    /** What a creation answers when it is more than `item` (a secret shown once). */
    created?: z.ZodType;
    contract: AsCaller<Record<string, unknown>>;
  };
  get?: Docs & { contract: AsCaller<{ id: number }> };
  update?: Docs & { body: z.ZodType; contract: AsCaller<{ id: number; changes: unknown }> };
  remove?: Docs & { contract: AsCaller<{ id: number }> };
}

const IdParam = z.object({ id: IdText });

/** The filters a client gave: an empty `search` is no search. */
function given(query: object): Record<string, unknown> {
  return Object.fromEntries(Object.entries(query).filter(([, v]) => v !== undefined && v !== ''));
}

/** The routes of `spec`, as a plugin registered with `prefix: '/api/v1'`. */
export function resourceRoutes(spec: ResourceSpec): FastifyPluginAsync<ServiceRouteOptions> {
  return async (plugin, deps) => {
    const app = plugin.withTypeProvider<ZodTypeProvider>();
    const { bus } = deps;
    const onRequest = spec.guard(deps.guards);
    const item = `${spec.path}:id/`;
    const common = { tags: spec.tags, security };
    const { list, create, get, update, remove } = spec;

    if (list)
      app.get(
        spec.path,
        {
          onRequest,
          schema: { ...common, ...docsOf(list), querystring: list.query, response: { 200: page(spec.item) } },
        },
        async (req) => {
          const { limit, offset } = req.query;
          const filters = given(req.query);
          const found = await callService(bus, list.contract, {
            principal: principalOf(req),
            ...filters,
            limit,
            offset,
          });
          return pageOf(req.url, deps.publicUrl, req.query, found);
        },
      );
    if (create)
      app.post(
        spec.path,
        {
          onRequest,
          schema: {
            ...common,
            ...docsOf(create),
            body: create.body,
            response: { 201: create.created ?? spec.item },
          },
        },
        async (req, reply) =>
          reply.status(201).send(
            await callService(bus, create.contract, {
              principal: principalOf(req),
              [create.field]: req.body,
            }),
          ),
      );
    if (get)
      app.get(
        item,
        { onRequest, schema: { ...common, ...docsOf(get), params: IdParam, response: { 200: spec.item } } },
        async (req) => callService(bus, get.contract, { principal: principalOf(req), id: req.params.id }),
      );
    if (update)
      app.patch(
        item,
        {
          onRequest,
          schema: {
            ...common,
            ...docsOf(update),
            params: IdParam,
            body: update.body,
            response: { 200: spec.item },
          },
        },
        async (req) =>
          callService(bus, update.contract, {
            principal: principalOf(req),
            id: req.params.id,
            changes: req.body,
          }),
      );
    if (remove)
      app.delete(
        item,
        { onRequest, schema: { ...common, ...docsOf(remove), params: IdParam, response: { 204: z.null() } } },
        async (req, reply) => {
          await callService(bus, remove.contract, { principal: principalOf(req), id: req.params.id });
          return reply.status(204).send(null);
        },
      );
  };
}

function docsOf({ summary, description }: Docs): Docs {
  return description === undefined ? { summary } : { summary, description };
}
