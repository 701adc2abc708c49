import { Pagination, page, pageOf } from '@switchboard/kit';
import { listWhatsappAccounts, WhatsappAccountSchema } from '@switchboard/proto';
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { security } from '../http/guards.ts';
import { callService } from './bus-call.ts';
import { type ServiceRouteOptions, tags } from './messaging-views.ts';

/** `whatsapp_accounts/`: the connected business number. Registered with `prefix: '/api/v1'`. */
export const whatsappAccountRoutes: FastifyPluginAsync<ServiceRouteOptions> = async (plugin, deps) => {
  const app = plugin.withTypeProvider<ZodTypeProvider>();
  const { bus, guards } = deps;

  app.get(
    '/whatsapp_accounts/',
    {
      onRequest: guards.requireUser,
      schema: {
        tags,
        security,
        summary: 'Connected number',
        description: 'The business number of this inbox (one), as a list like every other.',
        querystring: Pagination,
        response: { 200: page(WhatsappAccountSchema) },
      },
    },
    async (req) => {
      const { limit, offset } = req.query;
      const found = await callService(bus, listWhatsappAccounts, { limit, offset });
      return pageOf(req.url, deps.publicUrl, req.query, found);
    },
  );
};
