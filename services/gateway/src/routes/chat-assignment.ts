import { assignChat, ServiceError } from '@switchboard/proto';
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { Id } from '../domain/schemas.ts';
import { principalOf } from '../http/guards.ts';
import { callService } from './bus-call.ts';
import {
  ChatOut,
  createExpanders,
  type MessagingRouteOptions,
  security,
  tags,
  WaIdParam,
} from './messaging-views.ts';

/** `chat_assignment/`: hand a chat to a user and/or a group. Registered with `prefix: '/api/v1'`. */
export const chatAssignmentRoutes: FastifyPluginAsync<MessagingRouteOptions> = async (plugin, deps) => {
  const app = plugin.withTypeProvider<ZodTypeProvider>();
  const { bus } = deps;
  const messaging = deps.guards.requireMessagingUser;
  const { expandChat } = createExpanders(deps);

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
