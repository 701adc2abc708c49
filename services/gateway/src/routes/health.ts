import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';

export interface HealthChecks {
  database(): Promise<boolean>;
  nats(): Promise<boolean>;
}

const HealthOk = z.object({ status: z.literal('ok') });
const HealthDown = z.object({
  status: z.literal('unavailable'),
  code: z.literal('service_unavailable'),
  reason: z.string(),
  checks: z.object({ database: z.enum(['ok', 'down']), nats: z.enum(['ok', 'down']) }),
});

export interface HealthRouteOptions {
  checks: HealthChecks;
}

/** Registered with `prefix: '/api/v1'`. */
export const healthRoutes: FastifyPluginAsync<HealthRouteOptions> = async (plugin, { checks }) => {
  const app = plugin.withTypeProvider<ZodTypeProvider>();
  app.get(
    '/status/health/',
    {
      // Probes call this every few seconds; logging each call would bury everything else.
      logLevel: 'warn',
      schema: {
        tags: ['status'],
        summary: 'Health',
        description:
          '200 only when PostgreSQL and NATS both answer; 503 names the one that did not. No authentication.',
        response: { 200: HealthOk, 503: HealthDown },
      },
    },
    async (_req, reply) => {
      const [database, nats] = await Promise.all([checks.database(), checks.nats()]);
      if (database && nats) return { status: 'ok' as const };
      const down = [!database && 'PostgreSQL', !nats && 'NATS'].filter(Boolean).join(' and ');
      return reply.status(503).send({
        status: 'unavailable' as const,
        code: 'service_unavailable' as const,
        reason: `${down} ${down.includes(' and ') ? 'are' : 'is'} not answering.`,
        checks: { database: database ? 'ok' : 'down', nats: nats ? 'ok' : 'down' },
      });
    },
  );
};
