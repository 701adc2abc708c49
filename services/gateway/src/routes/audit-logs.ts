import { Pagination, page, pageOf } from '@switchboard/kit';
import { AuditEntrySchema, AuditLogSchema, auditList } from '@switchboard/proto';
import type { Bus } from '@switchboard/proto/bus';
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Guards } from '../http/guards.ts';
import { security } from '../http/guards.ts';
import { callService } from './bus-call.ts';

export type AuditLogRouteOptions = { bus: Bus; guards: Guards; publicUrl: string };

/** Registered with `prefix: '/api/v1'`. */
export const auditLogRoutes: FastifyPluginAsync<AuditLogRouteOptions> = async (plugin, deps) => {
  const app = plugin.withTypeProvider<ZodTypeProvider>();
  app.get(
    '/audit_logs/',
    {
      onRequest: deps.guards.requireRole('admin', 'configurator'),
      schema: {
        tags: ['event log'],
        summary: 'Event log',
        description:
          'Chats assigned, resolved and reopened, users and groups changed…, newest first. ' +
          'Filter by `target_type`, `target_id`, `action`. `at` is in POSIX seconds.',
        security,
        querystring: Pagination.extend({
          target_type: AuditEntrySchema.shape.target_type.optional(),
          target_id: z.string().optional(),
          action: z.string().optional(),
        }),
        response: { 200: page(AuditLogSchema) },
      },
    },
    async (req) => {
      const { limit, offset, target_type, target_id, action } = req.query;
      const found = await callService(deps.bus, auditList, {
        limit,
        offset,
        ...(target_type && { target_type }),
        ...(target_id && { target_id }),
        ...(action && { action }),
      });
      return pageOf(req.url, deps.publicUrl, req.query, found);
    },
  );
};
