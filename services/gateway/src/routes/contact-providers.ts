import { Pagination, page, pageOf } from '@switchboard/kit';
import {
  ContactProviderCreateSchema,
  ContactProviderSchema,
  ContactProviderUpdateSchema,
  ContactProviderWithSecretSchema,
  createContactProvider,
  deleteContactProvider,
  getContactProvider,
  listContactProviders,
  updateContactProvider,
} from '@switchboard/proto';
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { IdText } from '../domain/schemas.ts';
import { principalOf } from '../http/guards.ts';
import { callService } from './bus-call.ts';
import { type ServiceRouteOptions, security } from './messaging-views.ts';

const tags = ['contacts'];
const IdParam = z.object({ id: IdText });

/** `contact_providers/`: where contacts are read from (admins and the configurator). Registered with `prefix: '/api/v1'`. */
export const contactProviderRoutes: FastifyPluginAsync<ServiceRouteOptions> = async (plugin, deps) => {
  const app = plugin.withTypeProvider<ZodTypeProvider>();
  const { bus } = deps;
  const admins = deps.guards.requireRole('admin', 'configurator');

  app.get(
    '/contact_providers/',
    {
      onRequest: admins,
      schema: {
        tags,
        security,
        summary: 'List contact providers',
        description: 'First in precedence first (smallest `priority`).',
        querystring: Pagination,
        response: { 200: page(ContactProviderSchema) },
      },
    },
    async (req) =>
      pageOf(
        req.url,
        deps.publicUrl,
        req.query,
        await callService(bus, listContactProviders, { principal: principalOf(req), ...req.query }),
      ),
  );
  app.post(
    '/contact_providers/',
    {
      onRequest: admins,
      schema: {
        tags,
        security,
        summary: 'Connect a contact provider',
        description:
          'Kind `http`: the inbox POSTs signed questions to `url` (search by name or number, look up one number) and ' +
          'reads the contacts it answers; see the pull protocol in the chats README. The signing `secret` is answered ' +
          'only here.',
        body: ContactProviderCreateSchema,
        response: { 201: ContactProviderWithSecretSchema },
      },
    },
    async (req, reply) =>
      reply
        .status(201)
        .send(
          await callService(bus, createContactProvider, { principal: principalOf(req), provider: req.body }),
        ),
  );
  app.get(
    '/contact_providers/:id/',
    {
      onRequest: admins,
      schema: {
        tags,
        security,
        summary: 'Get a contact provider',
        params: IdParam,
        response: { 200: ContactProviderSchema },
      },
    },
    async (req) => callService(bus, getContactProvider, { principal: principalOf(req), id: req.params.id }),
  );
  app.patch(
    '/contact_providers/:id/',
    {
      onRequest: admins,
      schema: {
        tags,
        security,
        summary: 'Change a contact provider',
        params: IdParam,
        body: ContactProviderUpdateSchema,
        response: { 200: ContactProviderSchema },
      },
    },
    async (req) =>
      callService(bus, updateContactProvider, {
        principal: principalOf(req),
        id: req.params.id,
        changes: req.body,
      }),
  );
  app.delete(
    '/contact_providers/:id/',
    {
      onRequest: admins,
      schema: {
        tags,
        security,
        summary: 'Disconnect a contact provider',
        params: IdParam,
        response: { 204: z.null() },
      },
    },
    async (req, reply) => {
      await callService(bus, deleteContactProvider, { principal: principalOf(req), id: req.params.id });
      return reply.status(204).send(null);
    },
  );
};
