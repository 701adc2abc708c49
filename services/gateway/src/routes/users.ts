import { Pagination, page, pageOf } from '@switchboard/kit';
import { ServiceError } from '@switchboard/proto';
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { IdParam, UserCreate, UserOut, UserUpdate } from '../domain/schemas.ts';
import { type Guards, principalOf, security } from '../http/guards.ts';
import type { Users } from '../use-cases/users.ts';

export interface UserRouteDeps {
  users: Users;
  guards: Guards;
  publicUrl: string;
  availabilityEnabled: boolean;
}

const tags = ['users'];

/** Registered with `prefix: '/api/v1'`. */
export const userRoutes: FastifyPluginAsync<UserRouteDeps> = async (plugin, deps) => {
  const app = plugin.withTypeProvider<ZodTypeProvider>();
  const { users, guards } = deps;
  const admin = guards.requireRole('admin', 'configurator');

  app.get(
    '/users/me/',
    {
      onRequest: guards.requireUser,
      schema: { tags, security, summary: 'Current user', response: { 200: UserOut } },
    },
    async (req) => users.get(principalOf(req).user_id),
  );

  app.patch(
    '/users/me/availability/',
    {
      onRequest: guards.requireUser,
      schema: {
        tags,
        security,
        summary: 'Set my availability',
        description: 'Only when APP_IS_USER_AVAILABILITY_ENABLED is true; 404 otherwise.',
        body: z.object({ is_available: z.boolean() }),
        response: { 200: UserOut },
      },
    },
    async (req) => {
      if (!deps.availabilityEnabled)
        throw new ServiceError('not_found', 'User availability is not enabled on this inbox.');
      const me = principalOf(req);
      return users.update(me, me.user_id, { profile: { is_available: req.body.is_available } });
    },
  );

  app.get(
    '/users/',
    {
      onRequest: admin,
      schema: {
        tags,
        security,
        summary: 'List users',
        querystring: Pagination,
        response: { 200: page(UserOut) },
      },
    },
    async (req) => {
      const { limit, offset } = req.query;
      return pageOf(req.url, deps.publicUrl, req.query, await users.list(limit, offset));
    },
  );

  app.post(
    '/users/',
    {
      onRequest: admin,
      schema: {
        tags,
        security,
        summary: 'Create a user',
        description:
          'Admins and users take a seat; past `max_number_of_seats` the answer is 409 `seat_limit_reached`.',
        body: UserCreate,
        response: { 201: UserOut },
      },
    },
    async (req, reply) => reply.status(201).send(await users.create(principalOf(req), req.body)),
  );

  app.get(
    '/users/:id/',
    {
      onRequest: admin,
      schema: { tags, security, summary: 'Get a user', params: IdParam, response: { 200: UserOut } },
    },
    async (req) => users.get(req.params.id),
  );

  app.patch(
    '/users/:id/',
    {
      onRequest: admin,
      schema: {
        tags,
        security,
        summary: 'Update a user',
        description: 'Setting a password, or `is_active: false`, ends the user’s sessions.',
        params: IdParam,
        body: UserUpdate,
        response: { 200: UserOut },
      },
    },
    async (req) => users.update(principalOf(req), req.params.id, req.body),
  );

  app.delete(
    '/users/:id/',
    {
      onRequest: admin,
      schema: {
        tags,
        security,
        summary: 'Delete (deactivate) a user',
        description:
          'The user is deactivated: the seat is freed, sessions end, past messages keep their sender. ' +
          'PATCH `{"is_active": true}` re-activates.',
        params: IdParam,
        response: { 204: z.null() },
      },
    },
    async (req, reply) => {
      await users.deactivate(principalOf(req), req.params.id);
      return reply.status(204).send(null);
    },
  );
};
