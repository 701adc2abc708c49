import { Pagination, page, pageOf } from '@switchboard/kit';
import { listPersons, PersonSchema } from '@switchboard/proto';
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { principalOf } from '../http/guards.ts';
import { callService } from './bus-call.ts';
import { type ServiceRouteOptions, security, tags } from './messaging-views.ts';

/** `persons/`: the customers who wrote to the inbox. Registered with `prefix: '/api/v1'`. */
export const personRoutes: FastifyPluginAsync<ServiceRouteOptions> = async (plugin, deps) => {
  const app = plugin.withTypeProvider<ZodTypeProvider>();
  const { bus } = deps;
  const messaging = deps.guards.requireMessagingUser;

  app.get(
    '/persons/',
    {
      onRequest: messaging,
      schema: {
        tags,
        security,
        summary: 'Persons',
        description:
          'Customers who wrote to the inbox, named as the network names them. `search` matches number or name.',
        querystring: Pagination.extend({ search: z.string().max(100).optional() }),
        response: { 200: page(PersonSchema) },
      },
    },
    async (req) => {
      const { limit, offset, search } = req.query;
      const found = await callService(bus, listPersons, {
        principal: principalOf(req),
        limit,
        offset,
        ...(search && { search }),
      });
      return pageOf(req.url, deps.publicUrl, req.query, found);
    },
  );
};
