import type { HttpServer } from '@switchboard/kit';
import { OutboundMessageSchema, SendMessageResponseSchema } from '../domain/wire.ts';
import type { SandboxState } from '../store/store.ts';
import type { OutboundEngine } from '../use-cases/outbound.ts';
import { networkRoute, numberOf } from './network-auth.ts';

export function registerMessageRoutes(
  app: HttpServer,
  deps: { state: SandboxState; outbound: OutboundEngine },
): void {
  app.post(
    '/messages',
    networkRoute(deps.state, {
      tags: ['messages'],
      summary: 'Send a message',
      description:
        'Any outbound type: text, image, audio, video, document, sticker (by `link` or uploaded `id`), location, ' +
        'contacts, interactive, reaction, template. Free-form messages need the customer service window ' +
        '(24 h after the customer’s last message, 72 h from an ad referral), else 400 with code 131047; templates ' +
        'are checked against `GET /v1/configs/templates` (132001 unknown, 132000 wrong parameter count). ' +
        'Accepted messages then produce `sent`/`delivered`/`read` (or `failed`) status webhooks.',
      body: OutboundMessageSchema,
      response: { 200: SendMessageResponseSchema },
    }),
    async (req) => deps.outbound.accept(numberOf(req), req.body),
  );
}
