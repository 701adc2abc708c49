import { markAsReceived, WaIdSchema } from '@switchboard/proto';
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { principalOf, security } from '../http/guards.ts';
import { callService } from './bus-call.ts';
import { type ServiceRouteOptions, tags } from './messaging-views.ts';

/** `mark_as_received/`: the read mark of a user in a chat. Registered with `prefix: '/api/v1'`. */
export const markAsReceivedRoutes: FastifyPluginAsync<ServiceRouteOptions> = async (plugin, deps) => {
  const app = plugin.withTypeProvider<ZodTypeProvider>();
  const { bus } = deps;
  const messaging = deps.guards.requireMessagingUser;

  app.post(
    '/mark_as_received/',
    {
      onRequest: messaging,
      schema: {
        tags,
        security,
        summary: 'Read mark',
        description: 'Customer messages of that chat up to `timestamp` count as read for the calling user.',
        body: z.object({ customer_wa_id: WaIdSchema, timestamp: z.number().int().positive() }),
        response: { 200: markAsReceived.response },
      },
    },
    async (req) => callService(bus, markAsReceived, { principal: principalOf(req), ...req.body }),
  );
};
