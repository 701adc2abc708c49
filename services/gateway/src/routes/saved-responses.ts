import { Pagination, page, pageOf } from '@switchboard/kit';
import {
  assertInboxUser,
  createSavedResponse,
  deleteSavedResponse,
  getSavedResponse,
  listSavedResponses,
  SavedResponseCreateSchema,
  SavedResponseSchema,
  SavedResponseUpdateSchema,
  updateSavedResponse,
} from '@switchboard/proto';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { IdText } from '../domain/schemas.ts';
import { principalOf } from '../http/guards.ts';
import { callService } from './bus-call.ts';
import { type ServiceRouteOptions, security } from './messaging-views.ts';

const tags = ['saved responses'];
const IdParam = z.object({ id: IdText });

/** `saved_responses/`: text snippets shared by the instance's users. Registered with `prefix: '/api/v1'`. */
export const savedResponseRoutes: FastifyPluginAsync<ServiceRouteOptions> = async (plugin, deps) => {
  const app = plugin.withTypeProvider<ZodTypeProvider>();
  const { bus } = deps;
  // Before the body is read: a caller who may not use this gets 403, not a 400 about the body.
  const inboxUsers = async (req: FastifyRequest) => assertInboxUser(await deps.guards.authenticate(req));

  app.get(
    '/saved_responses/',
    {
      onRequest: inboxUsers,
      schema: {
        tags,
        security,
        summary: 'List saved responses',
        description: 'Every user’s, by name; `search` matches part of the name or the text.',
        querystring: Pagination.extend({ search: z.string().max(100).optional() }),
        response: { 200: page(SavedResponseSchema) },
      },
    },
    async (req) => {
      const { limit, offset, search } = req.query;
      const found = await callService(bus, listSavedResponses, {
        principal: principalOf(req),
        limit,
        offset,
        ...(search && { search }),
      });
      return pageOf(req.url, deps.publicUrl, req.query, found);
    },
  );
  app.post(
    '/saved_responses/',
    {
      onRequest: inboxUsers,
      schema: {
        tags,
        security,
        summary: 'Write a saved response',
        body: SavedResponseCreateSchema,
        response: { 201: SavedResponseSchema },
      },
    },
    async (req, reply) =>
      reply
        .status(201)
        .send(
          await callService(bus, createSavedResponse, { principal: principalOf(req), response: req.body }),
        ),
  );
  app.get(
    '/saved_responses/:id/',
    {
      onRequest: inboxUsers,
      schema: {
        tags,
        security,
        summary: 'Get a saved response',
        params: IdParam,
        response: { 200: SavedResponseSchema },
      },
    },
    async (req) => callService(bus, getSavedResponse, { principal: principalOf(req), id: req.params.id }),
  );
  app.patch(
    '/saved_responses/:id/',
    {
      onRequest: inboxUsers,
      schema: {
        tags,
        security,
        summary: 'Change a saved response',
        description: 'Its author or an admin (403 for anyone else).',
        params: IdParam,
        body: SavedResponseUpdateSchema,
        response: { 200: SavedResponseSchema },
      },
    },
    async (req) =>
      callService(bus, updateSavedResponse, {
        principal: principalOf(req),
        id: req.params.id,
        changes: req.body,
      }),
  );
  app.delete(
    '/saved_responses/:id/',
    {
      onRequest: inboxUsers,
      schema: {
        tags,
        security,
        summary: 'Delete a saved response',
        description: 'Its author or an admin (403 for anyone else).',
        params: IdParam,
        response: { 204: z.null() },
      },
    },
    async (req, reply) => {
      await callService(bus, deleteSavedResponse, { principal: principalOf(req), id: req.params.id });
      return reply.status(204).send(null);
    },
  );
};
