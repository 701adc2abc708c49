import { Pagination, page, pageOf } from '@switchboard/kit';
import { assignChat, getChat, listChats, ServiceError, updateChat } from '@switchboard/proto';
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { Id, IdText } from '../domain/schemas.ts';
import { principalOf, security } from '../http/guards.ts';
import { callService } from './bus-call.ts';
import {
  Bool,
  ChatOut,
  createExpanders,
  type MessagingRouteOptions,
  tags,
  WaIdParam,
} from './messaging-views.ts';

/**
 * `chats/`: list, get, resolve and reopen chats; `chat_assignment/`: hand a chat to a user and/or
 * a group. Registered with `prefix: '/api/v1'`.
 */
export const chatRoutes: FastifyPluginAsync<MessagingRouteOptions> = async (plugin, deps) => {
  const app = plugin.withTypeProvider<ZodTypeProvider>();
  const { bus } = deps;
  const messaging = deps.guards.requireMessagingUser;
  const { expandChats, expandChat } = createExpanders(deps);

  app.get(
    '/chats/',
    {
      onRequest: messaging,
      schema: {
        tags,
        security,
        summary: 'List chats',
        description:
          'Newest activity first, only chats the user may read. `new_messages` counts customer messages after the ' +
          'user’s read mark (`mark_as_received/`).',
        querystring: Pagination.extend({
          unread: Bool.optional(),
          resolved: Bool.optional(),
          assigned_to_user: IdText.optional(),
          assigned_group: IdText.optional(),
          search: z.string().max(100).optional(),
          tag: z
            .string()
            .min(1)
            .max(100)
            .optional()
            .describe('A tag’s id or name: only chats with that tag.'),
        }),
        response: { 200: page(ChatOut) },
      },
    },
    async (req) => {
      const { limit, offset, unread, resolved, assigned_to_user, assigned_group, search, tag } = req.query;
      const { count, results } = await callService(bus, listChats, {
        principal: principalOf(req),
        limit,
        offset,
        filters: {
          ...(unread !== undefined && { unread }),
          ...(resolved !== undefined && { resolved }),
          ...(assigned_to_user !== undefined && { assigned_to_user }),
          ...(assigned_group !== undefined && { assigned_group }),
          ...(search && { search }),
          ...(tag && { tag }),
        },
      });
      return pageOf(req.url, deps.publicUrl, req.query, { count, results: await expandChats(results) });
    },
  );
  app.get(
    '/chats/:wa_id/',
    {
      onRequest: messaging,
      schema: { tags, security, summary: 'Get a chat', params: WaIdParam, response: { 200: ChatOut } },
    },
    async (req) =>
      expandChat(await callService(bus, getChat, { principal: principalOf(req), wa_id: req.params.wa_id })),
  );
  app.patch(
    '/chats/:wa_id/',
    {
      onRequest: messaging,
      schema: {
        tags,
        security,
        summary: 'Resolve or reopen a chat',
        params: WaIdParam,
        body: z.object({ resolved: z.boolean() }),
        response: { 200: ChatOut },
      },
    },
    async (req) =>
      expandChat(
        await callService(bus, updateChat, {
          principal: principalOf(req),
          wa_id: req.params.wa_id,
          resolved: req.body.resolved,
        }),
      ),
  );
  app.patch(
    '/chat_assignment/:wa_id/',
    {
      onRequest: messaging,
      schema: {
        tags,
        security,
        summary: 'Assign a chat',
        description: 'To a user and/or a group; `null` unassigns. Assigning a resolved chat reopens it.',
        params: WaIdParam,
        body: z.object({
          assigned_to_user: Id.nullable().optional(),
          assigned_group: Id.nullable().optional(),
        }),
        response: { 200: ChatOut },
      },
    },
    async (req) => {
      const { assigned_to_user, assigned_group } = req.body;
      if (assigned_to_user) {
        const user = (await deps.users.byIds([assigned_to_user])).get(assigned_to_user);
        if (!user?.is_active || user.profile.role === 'configurator') {
          throw ServiceError.validation({ assigned_to_user: ['No active user with this id.'] });
        }
      }
      if (assigned_group && !(await deps.groups.byIds([assigned_group])).has(assigned_group)) {
        throw ServiceError.validation({ assigned_group: ['No group with this id.'] });
      }
      return expandChat(
        await callService(bus, assignChat, {
          principal: principalOf(req),
          wa_id: req.params.wa_id,
          ...(assigned_to_user !== undefined && { assigned_to_user }),
          ...(assigned_group !== undefined && { assigned_group }),
        }),
      );
    },
  );
};
