import type { HttpServer } from '@switchboard/kit';
import { z } from 'zod';

export function registerHealthRoute(app: HttpServer): void {
  app.get(
    '/sandbox/health',
    {
      schema: {
        tags: ['sandbox control'],
        summary: 'Liveness',
        response: { 200: z.object({ status: z.literal('ok') }) },
      },
    },
    async () => ({ status: 'ok' as const }),
  );
}
