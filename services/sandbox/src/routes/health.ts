import type { HttpServer } from '@switchboard/kit';
import { z } from 'zod';
import { controlRoute } from './control/schemas.ts';

export function registerHealthRoute(app: HttpServer): void {
  app.get(
    '/sandbox/health',
    controlRoute({ summary: 'Liveness', response: { 200: z.object({ status: z.literal('ok') }) } }),
    async () => ({ status: 'ok' as const }),
  );
}
