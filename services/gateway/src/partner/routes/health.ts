import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';

const Status = z.object({ status: z.literal('ok') }).meta({ id: 'HealthStatus', example: { status: 'ok' } });

/** `/`, `/health` and `/v1` (an alias of `/health`): no authentication. */
export const partnerHealthRoutes: FastifyPluginAsync = async (plugin) => {
  const app = plugin.withTypeProvider<ZodTypeProvider>();
  for (const [url, summary] of [
    ['/', 'Root health check'],
    ['/health', 'Health check'],
    ['/v1', 'Version 1 root health check (alias of /health)'],
  ] as const) {
    app.get(
      url,
      { logLevel: 'warn', schema: { tags: ['health'], summary, response: { 200: Status } } },
      async () => ({ status: 'ok' as const }),
    );
  }
};
