import { Pagination, page, pageOf } from '@switchboard/kit';
import {
  assertMayUseTags,
  createTag,
  deleteTag,
  getTag,
  listTags,
  TagCreateSchema,
  TagSchema,
  TagUpdateSchema,
  updateTag,
} from '@switchboard/proto';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { IdText } from '../domain/schemas.ts';
import { principalOf } from '../http/guards.ts';
import { callService } from './bus-call.ts';
import { type ServiceRouteOptions, security } from './messaging-views.ts';

const tags = ['tags'];
const IdParam = z.object({ id: IdText });

/** `tags/`: the instance's tags (users with `can_use_tags`). Registered with `prefix: '/api/v1'`. */
export const tagRoutes: FastifyPluginAsync<ServiceRouteOptions> = async (plugin, deps) => {
  const app = plugin.withTypeProvider<ZodTypeProvider>();
  const { bus } = deps;
  // Before the body is read: a caller who may not use this gets 403, not a 400 about the body.
  const tagUsers = async (req: FastifyRequest) => assertMayUseTags(await deps.guards.authenticate(req));

  app.get(
    '/tags/',
    {
      onRequest: tagUsers,
      schema: {
        tags,
        security,
        summary: 'List tags',
        description:
          'By name; `search` matches part of it. Only for users with `can_use_tags` (403 otherwise).',
        querystring: Pagination.extend({ search: z.string().max(100).optional() }),
        response: { 200: page(TagSchema) },
      },
    },
    async (req) => {
      const { limit, offset, search } = req.query;
      const found = await callService(bus, listTags, {
        principal: principalOf(req),
        limit,
        offset,
        ...(search && { search }),
      });
      return pageOf(req.url, deps.publicUrl, req.query, found);
    },
  );
  app.post(
    '/tags/',
    {
      onRequest: tagUsers,
      schema: {
        tags,
        security,
        summary: 'Create a tag',
        description: '`name` is unique in the instance (any letter case): 409 `tag_name_taken` otherwise.',
        body: TagCreateSchema,
        response: { 201: TagSchema },
      },
    },
    async (req, reply) =>
      reply
        .status(201)
        .send(await callService(bus, createTag, { principal: principalOf(req), tag: req.body })),
  );
  app.get(
    '/tags/:id/',
    {
      onRequest: tagUsers,
      schema: { tags, security, summary: 'Get a tag', params: IdParam, response: { 200: TagSchema } },
    },
    async (req) => callService(bus, getTag, { principal: principalOf(req), id: req.params.id }),
  );
  app.patch(
    '/tags/:id/',
    {
      onRequest: tagUsers,
      schema: {
        tags,
        security,
        summary: 'Change a tag',
        params: IdParam,
        body: TagUpdateSchema,
        response: { 200: TagSchema },
      },
    },
    async (req) =>
      callService(bus, updateTag, { principal: principalOf(req), id: req.params.id, changes: req.body }),
  );
  app.delete(
    '/tags/:id/',
    {
      onRequest: tagUsers,
      schema: {
        tags,
        security,
        summary: 'Delete a tag',
        description: 'Removes its taggings too; each removal is recorded in the tagging events.',
        params: IdParam,
        response: { 204: z.null() },
      },
    },
    async (req, reply) => {
      await callService(bus, deleteTag, { principal: principalOf(req), id: req.params.id });
      return reply.status(204).send(null);
    },
  );
};
