import {
  CreateInstanceRequestSchema,
  createPartnerInstance,
  deletePartnerInstance,
  getPartnerInstance,
  InstancePageSchema,
  listPartnerInstances,
  PartnerInstanceSchema,
} from '@switchboard/proto';
import type { Bus } from '@switchboard/proto/bus';
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { type PartnerAuth, partnerIdOf } from '../auth.ts';
import { HTTPErrorSchema, HTTPValidationErrorSchema } from '../errors.ts';

const security = [{ HTTPBearer: [] }];
const tags = ['instances'];
const errors = {
  401: HTTPErrorSchema,
  404: HTTPErrorSchema,
  422: HTTPValidationErrorSchema,
  503: HTTPErrorSchema,
};
const InstanceParams = z.object({ instance_id: z.string().min(1).max(200) });
const PageQuery = z.object({
  offset: z.coerce.number().int().min(0).default(0),
  limit: z.coerce.number().int().min(1).max(100).default(100),
});

export const partnerInstanceRoutes: FastifyPluginAsync<{ bus: Bus; auth: PartnerAuth }> = async (
  plugin,
  { bus, auth },
) => {
  const app = plugin.withTypeProvider<ZodTypeProvider>();
  const onRequest = auth.required;

  app.post(
    '/instances',
    {
      onRequest,
      schema: {
        tags,
        security,
        summary: 'Create Instance',
        description:
          'Accepted at once (202, `status: provisioning`): the instance is allocated in the background. It is ready when ' +
          '`health_check` answers 200 or the token event reaches `configurator.webhook_url`; problems needing the ' +
          'partner’s action arrive as the errors event (701: number already deployed). A subdomain in use is a 422.',
        body: CreateInstanceRequestSchema,
        response: { 202: PartnerInstanceSchema, ...errors },
      },
    },
    async (req, reply) => {
      const instance = await bus.request(
        createPartnerInstance,
        { partner_id: partnerIdOf(req), body: req.body },
        { timeoutMs: 15_000 },
      );
      return reply.status(202).send(instance);
    },
  );

  app.get(
    '/instances',
    {
      onRequest,
      schema: {
        tags,
        security,
        summary: 'List Instances',
        description:
          'The partner’s available (not deleted) instances, oldest first, from `offset`, at most `limit` (≤ 100).',
        querystring: PageQuery,
        response: { 200: InstancePageSchema, ...errors },
      },
    },
    async (req) => bus.request(listPartnerInstances, { partner_id: partnerIdOf(req), ...req.query }),
  );

  app.get(
    '/instances/:instance_id',
    {
      onRequest,
      schema: {
        tags,
        security,
        summary: 'Get Instance',
        params: InstanceParams,
        response: { 200: PartnerInstanceSchema, ...errors },
      },
    },
    async (req) =>
      bus.request(getPartnerInstance, { partner_id: partnerIdOf(req), instance_id: req.params.instance_id }),
  );

  app.delete(
    '/instances/:instance_id',
    {
      onRequest,
      schema: {
        tags,
        security,
        summary: 'Soft Delete Instance',
        description:
          'Marks the instance deleted with a timestamp and stops its processes; its data is kept. Its subdomain and ' +
          'number can be deployed again.',
        params: InstanceParams,
        response: { 200: z.null(), ...errors },
      },
    },
    async (req) => {
      await bus.request(deletePartnerInstance, {
        partner_id: partnerIdOf(req),
        instance_id: req.params.instance_id,
      });
      return null;
    },
  );
};
