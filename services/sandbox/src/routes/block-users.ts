import type { HttpServer } from '@switchboard/kit';
import { z } from 'zod';
import { errorItem, NetworkFailure } from '../domain/failure.ts';
import { WINDOW_SECONDS } from '../domain/window.ts';
import {
  type BlockedUser,
  BlockUsersRequestSchema,
  BlockUsersResponseSchema,
  NetworkErrorCode,
  normalizeRecipient,
} from '../domain/wire.ts';
import type { BusinessNumber } from '../store/model.ts';
import { numberNowSeconds, type SandboxState } from '../store/store.ts';
import { networkRoute, numberOf } from './network-auth.ts';

const BlockedListSchema = z.object({
  data: z.array(z.object({ messaging_product: z.literal('whatsapp'), wa_id: z.string() })),
});

function blockOne(number: BusinessNumber, input: string, nowSeconds: number): BlockedUser {
  const waId = normalizeRecipient(input);
  if (waId.length < 5) {
    return { input, errors: [errorItem(NetworkErrorCode.parameterValueNotValid, 'Invalid phone number.')] };
  }
  const last = number.customers.get(waId)?.lastMessageAt;
  // The network only lets a business block someone who wrote to it in the last 24 hours.
  if (last === undefined || nowSeconds - last >= WINDOW_SECONDS) {
    return {
      input,
      wa_id: waId,
      errors: [errorItem(NetworkErrorCode.reEngagementMessage, 'User has not messaged in the last 24 hours')],
    };
  }
  number.blockedUsers.add(waId);
  return { input, wa_id: waId };
}

export function registerBlockUserRoutes(app: HttpServer, deps: { state: SandboxState }): void {
  app.post(
    '/block_users',
    networkRoute(deps.state, {
      tags: ['block users'],
      summary: 'Block customers',
      description:
        'Blocked customers cannot reach the business (their messages are dropped) and sends to them fail with 130403. ' +
        'Only customers who wrote in the last 24 hours can be blocked; others come back in `failed_users`, ' +
        'with HTTP 400 and error 139100.',
      body: BlockUsersRequestSchema,
      response: { 200: BlockUsersResponseSchema },
    }),
    async (req) => {
      const number = numberOf(req);
      const now = numberNowSeconds(deps.state, number);
      const results = req.body.block_users.map((u) => blockOne(number, u.user, now));
      const added = results.filter((r) => !r.errors);
      const failed = results.filter((r) => r.errors);
      const lists = { added_users: added, ...(failed.length > 0 ? { failed_users: failed } : {}) };
      if (failed.length > 0) {
        throw new NetworkFailure(NetworkErrorCode.blockUsersFailed, undefined, {
          extra: { messaging_product: 'whatsapp', block_users: lists },
        });
      }
      return { messaging_product: 'whatsapp' as const, block_users: lists };
    },
  );

  app.delete(
    '/block_users',
    networkRoute(deps.state, {
      tags: ['block users'],
      summary: 'Unblock customers',
      body: BlockUsersRequestSchema,
      response: { 200: BlockUsersResponseSchema },
    }),
    async (req) => {
      const number = numberOf(req);
      const removed = req.body.block_users.map((u) => {
        const waId = normalizeRecipient(u.user);
        number.blockedUsers.delete(waId);
        return { input: u.user, wa_id: waId };
      });
      return { messaging_product: 'whatsapp' as const, block_users: { removed_users: removed } };
    },
  );

  app.get(
    '/block_users',
    networkRoute(deps.state, {
      tags: ['block users'],
      summary: 'List blocked customers',
      response: { 200: BlockedListSchema },
    }),
    async (req) => ({
      data: [...numberOf(req).blockedUsers].map((waId) => ({
        messaging_product: 'whatsapp' as const,
        wa_id: waId,
      })),
    }),
  );
}
