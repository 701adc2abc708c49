import { type HttpServer, Pagination, page, pageOf } from '@switchboard/kit';
import { z } from 'zod';
import { type Guards, principalOf } from '../identity/authenticate.ts';
import type { Groups } from '../identity/groups.ts';
import { GroupIn, GroupOut, IdParam } from '../identity/schemas.ts';

const tags = ['groups'];
const security = [{ token: [] }];

export function registerGroupRoutes(
  app: HttpServer,
  deps: { groups: Groups; guards: Guards; publicUrl: string },
): void {
  const { groups, guards } = deps;
  const admin = guards.requireRole('admin', 'configurator');

  // Agents read groups (they hand chats to them); only admins and the configurator change them.
  app.get(
    '/api/v1/groups/',
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
    '/api/v1/groups/',
    {
      onRequest: admin,
      schema: { tags, security, summary: 'Create a group', body: GroupIn, response: { 201: GroupOut } },
    },
    async (req, reply) => reply.status(201).send(await groups.create(principalOf(req), req.body.name)),
  );
  app.get(
    '/api/v1/groups/:id/',
    {
      onRequest: guards.requireUser,
      schema: { tags, security, summary: 'Get a group', params: IdParam, response: { 200: GroupOut } },
    },
    async (req) => groups.get(req.params.id),
  );
  app.patch(
    '/api/v1/groups/:id/',
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
    '/api/v1/groups/:id/',
    {
      onRequest: admin,
      schema: { tags, security, summary: 'Delete a group', params: IdParam, response: { 204: z.null() } },
    },
    async (req, reply) => {
      await groups.remove(principalOf(req), req.params.id);
      return reply.status(204).send(null);
    },
  );
}
