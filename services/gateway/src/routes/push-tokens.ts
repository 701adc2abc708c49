import { Pagination, page, pageOf } from '@switchboard/kit';
import { posixSeconds, posixSecondsOrNull, posixSecondsSchema, ServiceError } from '@switchboard/proto';
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import { isExpired, PushPlatformSchema, parseWebPushToken } from '../domain/push-tokens.ts';
import { IdText } from '../domain/schemas.ts';
import type { Guards } from '../http/guards.ts';
import { principalOf, security } from '../http/guards.ts';
import type { GatewayDatabase } from '../store/db.ts';
import {
  deleteOwnPushToken,
  type PushTokenRow,
  pageOwnPushTokens,
  updateOwnPushToken,
  upsertPushToken,
} from '../store/push-tokens.ts';

const tags = ['push tokens'];
const IdParam = z.object({ id: IdText });

const webPushExample = JSON.stringify({
  endpoint: 'https://push.example.net/send/c1KrM5eyXw',
  keys: {
    p256dh: 'BNcRdreALRFXTkOOUHK1EtK2wtaz5Ry4YfYCA_0QTpQtUbVlUls0VJXg7A8u-Ts1XbjhazAkj7I99e8QcYP7DkM',
    auth: 'tBHItJI5svbpez7KI4CCXg',
  },
});

export const PushTokenOut = z
  .object({
    id: z.number().int(),
    token: z.string(),
    platform: PushPlatformSchema,
    device_name: z.string(),
    enabled: z.boolean(),
    registered_at: posixSecondsSchema(
      'when the token was last registered (register again at least monthly).',
    ),
    last_used_at: posixSecondsSchema('when a notification was last sent to it.').nullable(),
    expired: z
      .boolean()
      .describe('Not registered again within the configured days (60 by default): it receives nothing.'),
  })
  .meta({
    id: 'PushToken',
    examples: [
      {
        id: 5,
        token: webPushExample,
        platform: 'webpush',
        device_name: 'Firefox on the front desk',
        enabled: true,
        registered_at: 1_763_900_000,
        last_used_at: null,
        expired: false,
      },
    ],
  });

const PushTokenIn = z
  .strictObject({
    token: z
      .string()
      .min(1)
      .max(4096)
      .describe(
        'The device token; for `webpush` the subscription JSON (`endpoint`, `keys.p256dh`, `keys.auth`) as a string.',
      ),
    platform: PushPlatformSchema,
    device_name: z.string().trim().max(100).optional(),
    enabled: z.boolean().optional(),
  })
  .meta({
    examples: [{ token: webPushExample, platform: 'webpush', device_name: 'Firefox on the front desk' }],
  });

const PushTokenChange = z
  .strictObject({ device_name: z.string().trim().max(100).optional(), enabled: z.boolean().optional() })
  .meta({ examples: [{ enabled: false }] });

export interface PushTokenRouteOptions {
  db: Kysely<GatewayDatabase>;
  guards: Guards;
  publicUrl: string;
  ttlDays: number;
  /** Awaited before a change is answered: a device registered is notified of every later message. */
  tokensChanged(): Promise<void>;
}

/** `push_tokens/`: the caller's own push-notification tokens. Registered with `prefix: '/api/v1'`. */
export const pushTokenRoutes: FastifyPluginAsync<PushTokenRouteOptions> = async (plugin, deps) => {
  const app = plugin.withTypeProvider<ZodTypeProvider>();
  const { db } = deps;
  const signedIn = deps.guards.requireUser;
  const out = (t: PushTokenRow): z.infer<typeof PushTokenOut> => ({
    id: t.id,
    token: t.token,
    platform: t.platform,
    device_name: t.device_name,
    enabled: t.enabled,
    registered_at: posixSeconds(t.registered_at),
    last_used_at: posixSecondsOrNull(t.last_used_at),
    expired: isExpired(t.registered_at, deps.ttlDays),
  });
  const notFound = () => new ServiceError('not_found', 'No push token with this id.');

  app.get(
    '/push_tokens/',
    {
      onRequest: signedIn,
      schema: {
        tags,
        security,
        summary: 'List own push tokens',
        querystring: Pagination,
        response: { 200: page(PushTokenOut) },
      },
    },
    async (req) => {
      const { count, rows } = await pageOwnPushTokens(db, principalOf(req).user_id, req.query);
      return pageOf(req.url, deps.publicUrl, req.query, { count, results: rows.map(out) });
    },
  );
  app.post(
    '/push_tokens/',
    {
      onRequest: signedIn,
      schema: {
        tags,
        security,
        summary: 'Register a push token (or register it again)',
        description:
          'Create-or-re-register: the same token is the same record (201 the first time, 200 after, with ' +
          '`registered_at` refreshed). Register again at least once a month; a token not registered within 60 days ' +
          '(configurable) stops receiving. Delete it when the user signs out on that device. Every enabled token of ' +
          'every user who may read a chat is notified of the customer’s new messages in it, on the platforms this ' +
          'inbox has configured (Web Push with VAPID keys); tokens of other platforms are kept and not notified.',
        body: PushTokenIn,
        response: { 200: PushTokenOut, 201: PushTokenOut },
      },
    },
    async (req, reply) => {
      if (req.body.platform === 'webpush') {
        const parsed = parseWebPushToken(req.body.token);
        if (!parsed.ok) throw ServiceError.validation({ token: [parsed.reason] });
      }
      const { row, created } = await upsertPushToken(db, { ...req.body, user_id: principalOf(req).user_id });
      await deps.tokensChanged();
      return reply.status(created ? 201 : 200).send(out(row));
    },
  );
  app.patch(
    '/push_tokens/:id/',
    {
      onRequest: signedIn,
      schema: {
        tags,
        security,
        summary: 'Rename, enable or disable a push token',
        description: 'Only own tokens (another user’s is 404).',
        params: IdParam,
        body: PushTokenChange,
        response: { 200: PushTokenOut },
      },
    },
    async (req) => {
      const row = await updateOwnPushToken(db, principalOf(req).user_id, req.params.id, req.body);
      if (!row) throw notFound();
      await deps.tokensChanged();
      return out(row);
    },
  );
  app.delete(
    '/push_tokens/:id/',
    {
      onRequest: signedIn,
      schema: {
        tags,
        security,
        summary: 'Deregister a push token',
        description: 'Only own tokens (another user’s is 404).',
        params: IdParam,
        response: { 204: z.null() },
      },
    },
    async (req, reply) => {
      if (!(await deleteOwnPushToken(db, principalOf(req).user_id, req.params.id))) throw notFound();
      await deps.tokensChanged();
      return reply.status(204).send(null);
    },
  );
};
