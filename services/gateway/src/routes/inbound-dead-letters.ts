import { InboxErrorSchema, Pagination, page, pageOf } from '@switchboard/kit';
import {
  InboundDeadLetterSchema,
  listInboundDeadLetters,
  redriveInboundDeadLetter,
} from '@switchboard/proto';
import type { Bus } from '@switchboard/proto/bus';
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { type Guards, principalOf, security } from '../http/guards.ts';
import { callService } from './bus-call.ts';

const tags = ['network webhook'];
const DeadLetterId = z.object({ id: z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER) });
const Bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

export type InboundDeadLetterRouteOptions = { bus: Bus; guards: Guards; publicUrl: string };

/**
 * Network webhook bodies chats could never store (a data exception, a bug), kept with their
 * error, and their re-drive after a fix. Admins and the configurator only. Registered with
 * `prefix: '/api/v1'`.
 */
export const inboundDeadLetterRoutes: FastifyPluginAsync<InboundDeadLetterRouteOptions> = async (
  plugin,
  deps,
) => {
  const app = plugin.withTypeProvider<ZodTypeProvider>();
  const admins = deps.guards.requireRole('admin', 'configurator');

  app.get(
    '/waba/dead_letters/',
    {
      onRequest: admins,
      schema: {
        tags,
        security,
        summary: 'Inbound dead letters',
        description:
          'Network webhook bodies the inbox accepted but could never process (the network got its 200), newest ' +
          'first, each with the body exactly as received and the error. Transient failures (database or NATS down) ' +
          'never end here: they are retried until they pass. `redriven=false` lists those not re-driven yet.',
        querystring: Pagination.extend({ redriven: Bool.optional() }),
        response: { 200: page(InboundDeadLetterSchema) },
      },
    },
    async (req) => {
      const { limit, offset, redriven } = req.query;
      const found = await callService(deps.bus, listInboundDeadLetters, {
        limit,
        offset,
        ...(redriven !== undefined && { redriven }),
      });
      return pageOf(req.url, deps.publicUrl, req.query, found);
    },
  );

  app.post(
    '/waba/dead_letters/:id/redrive/',
    {
      onRequest: admins,
      schema: {
        tags,
        security,
        summary: 'Re-drive an inbound dead letter',
        description:
          'After the cause is fixed: processes the body again, as received (it goes through the inbound stream ' +
          'like any network webhook; if it fails again it becomes a new dead letter). Re-driving twice processes ' +
          'it once. Recorded in the event log (`inbound.redriven`).',
        params: DeadLetterId,
        response: { 200: InboundDeadLetterSchema, 404: InboxErrorSchema, 409: InboxErrorSchema },
      },
    },
    async (req) =>
      callService(deps.bus, redriveInboundDeadLetter, { principal: principalOf(req), id: req.params.id }),
  );
};
