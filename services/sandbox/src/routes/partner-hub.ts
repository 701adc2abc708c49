import { randomUUID } from 'node:crypto';
import type { HttpServer } from '@switchboard/kit';
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { randomSecret } from '../config.ts';
import { failures, NetworkFailure } from '../domain/failure.ts';
import {
  ChannelApiKeySchema,
  CloudApiErrorBodySchema,
  HealthStatusSchema,
  NetworkErrorCode,
  PARTNER_HUB_KEY_HEADER,
} from '../domain/wire.ts';
import type { SandboxState } from '../store/store.ts';
import { networkRoute, numberOf } from './network-auth.ts';

const ChannelParams = z.object({
  partner_id: z.string().min(1).max(100),
  channel_id: z.string().min(1).max(100),
});

/** The hub accepts any non-empty partner key (see below); a call without one is 401. */
async function requireHubKey(req: FastifyRequest): Promise<void> {
  const hubKey = req.headers[PARTNER_HUB_KEY_HEADER];
  if (typeof hubKey !== 'string' || hubKey.length === 0) throw failures.unauthorized();
}

/** The options of a partner hub call: the hub key is checked first, and its 401 documented. */
function hubRoute<S extends { response: Record<number, unknown> }>(schema: S) {
  return {
    preHandler: requireHubKey,
    schema: {
      tags: ['partner hub'],
      ...schema,
      response: { ...schema.response, 401: CloudApiErrorBodySchema },
    },
  };
}

/**
 * The provider's partner hub and the messaging API's health status (see proto's
 * `network/partner-hub.ts` for where their shapes come from). A channel is a business number;
 * its id is the number's phone number id. The hub accepts any partner id with a non-empty
 * `x-api-key`: the sandbox has no partner accounts to check them against.
 */
export function registerPartnerHubRoutes(app: HttpServer, deps: { state: SandboxState }): void {
  app.post(
    '/api/v2/partners/:partner_id/channels/:channel_id/api_keys',
    hubRoute({
      summary: 'Generate a channel’s API key',
      description:
        'A new provider API key for the channel (the business number); every previous key of the channel stops ' +
        'working at once. Needs the partner’s hub key in `x-api-key`.',
      params: ChannelParams,
      response: { 201: ChannelApiKeySchema, 404: CloudApiErrorBodySchema },
    }),
    async (req, reply) => {
      const number = deps.state.byId(req.params.channel_id);
      if (!number) {
        const unknown = `Unknown channel ${req.params.channel_id}.`;
        throw new NetworkFailure(NetworkErrorCode.invalidParameter, unknown, { status: 404 });
      }
      const apiKey = randomSecret('sbx_');
      deps.state.replaceApiKey(number, apiKey);
      const address = `${req.protocol}://${req.host}`;
      return reply.status(201).send({ id: randomUUID(), api_key: apiKey, address, app_id: number.wabaId });
    },
  );

  app.get(
    '/health_status',
    networkRoute(deps.state, {
      tags: ['health'],
      summary: 'Health status of the key’s number',
      description:
        'The messaging health of the number the key belongs to, with its `PHONE_NUMBER` and `WABA` entities; ' +
        '`fields=display_phone_number` adds the number.',
      querystring: z.object({ fields: z.string().max(200).optional() }),
      response: { 200: HealthStatusSchema },
    }),
    async (req) => {
      const number = numberOf(req);
      const wantsNumber = (req.query.fields ?? '').split(',').includes('display_phone_number');
      return {
        health_status: {
          can_send_message: 'AVAILABLE' as const,
          entities: [
            {
              entity_type: 'PHONE_NUMBER' as const,
              id: number.phoneNumberId,
              can_send_message: 'AVAILABLE' as const,
            },
            { entity_type: 'WABA' as const, id: number.wabaId, can_send_message: 'AVAILABLE' as const },
          ],
        },
        id: number.phoneNumberId,
        ...(wantsNumber && { display_phone_number: number.displayPhoneNumber }),
      };
    },
  );
}
