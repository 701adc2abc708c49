import { Pagination, page, pageOf } from '@switchboard/kit';
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { GroupIn, GroupOut, IdParam } from '../domain/schemas.ts';
import { type Guards, principalOf, security } from '../http/guards.ts';
import type { Groups } from '../use-cases/groups.ts';

const tags = ['groups'];

export type GroupRouteOptions = { groups: Groups; guards: Guards; publicUrl: string };

/** Registered with `prefix: '/api/v1'`. */
export const groupRoutes: FastifyPluginAsync<GroupRouteOptions> = async (plugin, deps) => {
  const app = plugin.withTypeProvider<ZodTypeProvider>();
  const { groups, guards } = deps;
  const admin = guards.requireRole('admin', 'configurator');

  // Agents read groups (they hand chats to them); only admins and the configurator change them.
  app.get(
    '/groups/',
    {
      onRequest: guards.requireUser,
      schema: {
        tags,
        security,
        summary: 'List groups',
        description: 'Every signed-in user may list groups; creating, renaming and deleting is for admins.',
        querystring: Pagination,
        response: { 200: page(GroupOut) },
      },
    },
    async (req) => {
      const { limit, offset } = req.query;
      return pageOf(req.url, deps.publicUrl, req.query, await groups.list(limit, offset));
    },
  );
  app.post(
    '/groups/',
    {
      onRequest: admin,
      schema: { tags, security, summary: 'Create a group', body: GroupIn, response: { 201: GroupOut } },
    },
    async (req, reply) => reply.status(201).send(await groups.create(principalOf(req), req.body.name)),
  );
  app.get(
    '/groups/:id/',
    {
      onRequest: guards.requireUser,
      schema: { tags, security, summary: 'Get a group', params: IdParam, response: { 200: GroupOut } },
    },
    async (req) => groups.get(req.params.id),
  );
  app.patch(
    '/groups/:id/',
    {
      onRequest: admin,
      schema: {
        tags,
        security,
        summary: 'Rename a group',
        params: IdParam,
        body: GroupIn,
        response: { 200: GroupOut },
      },
    },
    async (req) => groups.rename(principalOf(req), req.params.id, req.body.name),
  );
  app.delete(
    '/groups/:id/',
    {
      onRequest: admin,
      schema: { tags, security, summary: 'Delete a group', params: IdParam, response: { 204: z.null() } },
    },
    async (req, reply) => {
      await groups.remove(principalOf(req), req.params.id);
      return reply.status(204).send(null);
    },
  );
};
