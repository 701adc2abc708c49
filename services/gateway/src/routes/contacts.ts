import { Pagination, page, pageOf } from '@switchboard/kit';
import {
  blockContact,
  ContactBlockSchema,
  ContactVerificationSchema,
  DirectoryContactSchema,
  FailedProviderSchema,
  getContact,
  listContacts,
  verifyContact,
} from '@switchboard/proto';
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { principalOf, security } from '../http/guards.ts';
import { callService } from './bus-call.ts';
import { type ServiceRouteOptions, WaIdParam } from './messaging-views.ts';

const tags = ['contacts'];
const failedProviders = z
  .array(FailedProviderSchema)
  .describe('Providers whose answer is missing from this response (slow, failing or outside the protocol).');

/** `contacts/`: contacts merged from the contact providers, and the network actions on them. Registered with `prefix: '/api/v1'`. */
export const contactRoutes: FastifyPluginAsync<ServiceRouteOptions> = async (plugin, deps) => {
  const app = plugin.withTypeProvider<ZodTypeProvider>();
  const { bus } = deps;
  const messaging = deps.guards.requireMessagingUser;

  app.get(
    '/contacts/',
    {
      onRequest: messaging,
      schema: {
        tags,
        security,
        summary: 'Search contacts',
        description:
          'Contacts from every enabled contact provider, one per `wa_id` (the provider with the smallest `priority` ' +
          'wins), and the customers who wrote to the inbox (named as the network names them), by name. A provider ' +
          'that fails or does not answer within its timeout is left out and named in `failed_providers`. Chat facts ' +
          '(window, resolved, last message) appear only for chats the caller may read.',
        querystring: Pagination.extend({
          search: z.string().max(100).optional().describe('Part of a name or number.'),
        }),
        response: { 200: page(DirectoryContactSchema).extend({ failed_providers: failedProviders }) },
      },
    },
    async (req) => {
      const { limit, offset, search } = req.query;
      const found = await callService(bus, listContacts, {
        principal: principalOf(req),
        limit,
        offset,
        ...(search && { search }),
      });
      return {
        ...pageOf(req.url, deps.publicUrl, req.query, { count: found.count, results: found.results }),
        failed_providers: found.failed_providers,
      };
    },
  );
  app.get(
    '/contacts/:wa_id/',
    {
      onRequest: messaging,
      schema: {
        tags,
        security,
        summary: 'Get a contact',
        description:
          'What the providers know of the number, else the customer as the network named them; 404 when nobody knows it.',
        params: WaIdParam,
        response: { 200: DirectoryContactSchema.extend({ failed_providers: failedProviders }) },
      },
    },
    async (req) => callService(bus, getContact, { principal: principalOf(req), wa_id: req.params.wa_id }),
  );
  app.post(
    '/contacts/:wa_id/verify/',
    {
      onRequest: messaging,
      schema: {
        tags,
        security,
        summary: 'Verify a number',
        description:
          'Asks the network whether the number has a WhatsApp account. The provider’s Cloud API has no such check: ' +
          'there the answer is `{"status": "unknown"}`. Needs write permission on the chat.',
        params: WaIdParam,
        response: { 200: ContactVerificationSchema },
      },
    },
    async (req) => callService(bus, verifyContact, { principal: principalOf(req), wa_id: req.params.wa_id }),
  );
  app.post(
    '/contacts/:wa_id/block/',
    {
      onRequest: messaging,
      schema: {
        tags,
        security,
        summary: 'Block a customer',
        description:
          'Through the network’s block API: the customer can no longer write to the business. The network blocks only ' +
          'customers who wrote in the last 24 hours (else 409 `block_refused`). Needs write permission on the chat.',
        params: WaIdParam,
        response: { 200: ContactBlockSchema },
      },
    },
    async (req) =>
      callService(bus, blockContact, { principal: principalOf(req), wa_id: req.params.wa_id, blocked: true }),
  );
  app.delete(
    '/contacts/:wa_id/block/',
    {
      onRequest: messaging,
      schema: {
        tags,
        security,
        summary: 'Unblock a customer',
        params: WaIdParam,
        response: { 200: ContactBlockSchema },
      },
    },
    async (req) =>
      callService(bus, blockContact, {
        principal: principalOf(req),
        wa_id: req.params.wa_id,
        blocked: false,
      }),
  );
  app.post(
    '/contacts/:wa_id/report/',
    {
      onRequest: messaging,
      schema: {
        tags,
        security,
        summary: 'Report a customer',
        description:
          'Blocks the customer at the network and records the report with its reason (in the event log too).',
        params: WaIdParam,
        body: z
          .strictObject({ reason: z.string().trim().min(1).max(1000) })
          .meta({ examples: [{ reason: 'spam' }] }),
        response: { 200: ContactBlockSchema },
      },
    },
    async (req) =>
      callService(bus, blockContact, {
        principal: principalOf(req),
        wa_id: req.params.wa_id,
        blocked: true,
        report_reason: req.body.reason,
      }),
  );
};
