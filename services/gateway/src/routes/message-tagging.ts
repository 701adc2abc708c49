import { Pagination, page, pageOf } from '@switchboard/kit';
import {
  assertMayTag,
  createMessageTagging,
  deleteMessageTagging,
  listMessageTaggings,
  MessageTaggingCreateSchema,
  MessageTaggingSchema,
} from '@switchboard/proto';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { IdText } from '../domain/schemas.ts';
import { principalOf } from '../http/guards.ts';
import { callService } from './bus-call.ts';
import { type ServiceRouteOptions, security } from './messaging-views.ts';

const tags = ['tags'];

/** `chat_tagging/`: tags on messages. Registered with `prefix: '/api/v1'`. */
export const messageTaggingRoutes: FastifyPluginAsync<ServiceRouteOptions> = async (plugin, deps) => {
  const app = plugin.withTypeProvider<ZodTypeProvider>();
  const { bus } = deps;
  // Before the body is read: a caller who may not use this gets 403, not a 400 about the body.
  const taggers = async (req: FastifyRequest) => assertMayTag(await deps.guards.authenticate(req));

  app.get(
    '/message_tagging/',
    {
      onRequest: taggers,
      schema: {
        tags,
        security,
        summary: 'List message taggings',
        description: 'Newest first, of messages in chats the caller may read; needs `can_use_tags`.',
        querystring: Pagination.extend({
          message: z.string().min(1).max(200).optional().describe('A message id or wamid.'),
          tag: IdText.optional(),
        }),
        response: { 200: page(MessageTaggingSchema) },
      },
    },
    async (req) => {
      const { limit, offset, message, tag } = req.query;
      const found = await callService(bus, listMessageTaggings, {
        principal: principalOf(req),
        limit,
        offset,
        ...(message !== undefined && { message }),
        ...(tag !== undefined && { tag }),
      });
      return pageOf(req.url, deps.publicUrl, req.query, found);
    },
  );
  app.post(
    '/message_tagging/',
    {
      onRequest: taggers,
      schema: {
        tags,
        security,
        summary: 'Tag a message',
        description:
          'Needs `can_use_tags` and read permission on the message’s chat. A message has a tag once: 409 `already_tagged` on a ' +
          'second time. Recorded in `message_tagging_events/` and the event log.',
        body: MessageTaggingCreateSchema,
        response: { 201: MessageTaggingSchema },
      },
    },
    async (req, reply) =>
      reply
        .status(201)
        .send(
          await callService(bus, createMessageTagging, { principal: principalOf(req), tagging: req.body }),
        ),
  );
  app.delete(
    '/message_tagging/:id/',
    {
      onRequest: taggers,
      schema: {
        tags,
        security,
        summary: 'Untag a message',
        params: z.object({ id: IdText }),
        response: { 204: z.null() },
      },
    },
    async (req, reply) => {
      await callService(bus, deleteMessageTagging, { principal: principalOf(req), id: req.params.id });
      return reply.status(204).send(null);
    },
  );
};
