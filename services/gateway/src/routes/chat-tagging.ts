import { Pagination, page, pageOf } from '@switchboard/kit';
import {
  assertMayTag,
  ChatTaggingCreateSchema,
  ChatTaggingSchema,
  createChatTagging,
  deleteChatTagging,
  listChatTaggings,
  WaIdSchema,
} from '@switchboard/proto';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { IdText } from '../domain/schemas.ts';
import { principalOf } from '../http/guards.ts';
import { callService } from './bus-call.ts';
import { type ServiceRouteOptions, security } from './messaging-views.ts';

const tags = ['tags'];

/** `chat_tagging/`: tags on chats. Registered with `prefix: '/api/v1'`. */
export const chatTaggingRoutes: FastifyPluginAsync<ServiceRouteOptions> = async (plugin, deps) => {
  const app = plugin.withTypeProvider<ZodTypeProvider>();
  const { bus } = deps;
  // Before the body is read: a caller who may not use this gets 403, not a 400 about the body.
  const taggers = async (req: FastifyRequest) => assertMayTag(await deps.guards.authenticate(req));

  app.get(
    '/chat_tagging/',
    {
      onRequest: taggers,
      schema: {
        tags,
        security,
        summary: 'List chat taggings',
        description: 'Newest first, of chats the caller may read; needs `can_use_tags`.',
        querystring: Pagination.extend({ chat: WaIdSchema.optional(), tag: IdText.optional() }),
        response: { 200: page(ChatTaggingSchema) },
      },
    },
    async (req) => {
      const { limit, offset, chat, tag } = req.query;
      const found = await callService(bus, listChatTaggings, {
        principal: principalOf(req),
        limit,
        offset,
        ...(chat !== undefined && { chat }),
        ...(tag !== undefined && { tag }),
      });
      return pageOf(req.url, deps.publicUrl, req.query, found);
    },
  );
  app.post(
    '/chat_tagging/',
    {
      onRequest: taggers,
      schema: {
        tags,
        security,
        summary: 'Tag a chat',
        description:
          'Needs `can_use_tags` and read permission on the chat. A chat has a tag once: 409 `already_tagged` on a ' +
          'second time. Recorded in `chat_tagging_events/` and the event log.',
        body: ChatTaggingCreateSchema,
        response: { 201: ChatTaggingSchema },
      },
    },
    async (req, reply) =>
      reply
        .status(201)
        .send(await callService(bus, createChatTagging, { principal: principalOf(req), tagging: req.body })),
  );
  app.delete(
    '/chat_tagging/:id/',
    {
      onRequest: taggers,
      schema: {
        tags,
        security,
        summary: 'Untag a chat',
        params: z.object({ id: IdText }),
        response: { 204: z.null() },
      },
    },
    async (req, reply) => {
      await callService(bus, deleteChatTagging, { principal: principalOf(req), id: req.params.id });
      return reply.status(204).send(null);
    },
  );
};
