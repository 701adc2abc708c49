import { Pagination, page, pageOf } from '@switchboard/kit';
import { listTemplates } from '@switchboard/proto';
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { security } from '../http/guards.ts';
import { callService } from './bus-call.ts';
import { Bool, type ServiceRouteOptions, tags } from './messaging-views.ts';

/** `templates/`: the message templates of the number. Registered with `prefix: '/api/v1'`. */
export const templateRoutes: FastifyPluginAsync<ServiceRouteOptions> = async (plugin, deps) => {
  const app = plugin.withTypeProvider<ZodTypeProvider>();
  const { bus, guards } = deps;

  app.get(
    '/templates/',
    {
      onRequest: guards.requireUser,
      schema: {
        tags,
        security,
        summary: 'List templates',
        description:
          'Read from the network and cached; `?refresh=true` reads them again. A list like every other: ' +
          '`limit`/`offset`, plus `fetched_at`, when the templates were read from the network.',
        querystring: Pagination.extend({ refresh: Bool.optional() }),
        response: {
          200: page(z.looseObject({})).extend({ fetched_at: listTemplates.response.shape.fetched_at }),
        },
      },
    },
    async (req) => {
      const { limit, offset, refresh } = req.query;
      const { fetched_at, ...found } = await callService(bus, listTemplates, {
        refresh: refresh ?? false,
        limit,
        offset,
      });
      return { ...pageOf(req.url, deps.publicUrl, req.query, found), fetched_at };
    },
  );
};
