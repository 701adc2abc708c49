import type { IncomingMessage, ServerResponse } from 'node:http';
import { type HttpServer, Pagination, page, pageOf } from '@switchboard/kit';
import {
  DeliveryAttemptSchema,
  fanoutRpc,
  type Principal,
  ReplayResultSchema,
  TestOutcomeSchema,
  WEBHOOK_TEST_RPC_TIMEOUT_MS,
  WebhookHeadersSchema,
  WebhookSchema,
  WebhookSecretSchema,
  WebhookUrlSchema,
  WebhookWithSecretSchema,
} from '@switchboard/proto';
import type { Bus } from '@switchboard/proto/bus';
import type {
  FastifyBaseLogger,
  FastifyInstance,
  FastifyPluginAsync,
  FastifyRequest,
  RawServerDefault,
} from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { IdText } from '../domain/schemas.ts';
import { security } from '../http/guards.ts';
import { callService } from './bus-call.ts';

const tags = ['webhooks'];
/** Inside the plugin, under `/api/v1`. */
const BASE = '/webhooks/waba/';

const Webhook = WebhookSchema.meta({
  id: 'Webhook',
  description:
    'A per-user webhook: every inbound message and status update is POSTed to `url` with the network body ' +
    'unchanged and Standard Webhooks headers (`webhook-id`, `webhook-timestamp`, `webhook-signature`).',
});
const WebhookCreated = WebhookWithSecretSchema.meta({
  id: 'WebhookWithSecret',
  description: 'The webhook and its signing secret. The secret is shown only here: store it now.',
});
const DeliveryAttempt = DeliveryAttemptSchema.meta({ id: 'WebhookDeliveryAttempt' });
const TestOutcome = TestOutcomeSchema.meta({ id: 'WebhookTestOutcome' });

const IdParams = z.object({ id: z.string().min(1).max(100) });
const ListQuery = Pagination.extend({
  owner: IdText.optional().describe('Admins only: webhooks of this user'),
});

const CreateBody = z.object({
  url: WebhookUrlSchema,
  enabled: z.boolean().optional(),
  ordered: z.boolean().optional().describe('Deliver one event at a time, in order (default false)'),
  headers: WebhookHeadersSchema.optional(),
  secret: WebhookSecretSchema.optional().describe('Bring your own secret; one is generated when absent'),
});
const UpdateFields = {
  enabled: z.boolean().optional().describe('false pauses deliveries; true resumes them and clears a disable'),
  ordered: z.boolean().optional(),
  headers: WebhookHeadersSchema.optional().describe('Replaces all static headers'),
};
const PutBody = z.object({ url: WebhookUrlSchema, ...UpdateFields });
const PatchBody = z.object({ url: WebhookUrlSchema.optional(), ...UpdateFields });
/** 9999-12-31T23:59:59Z: the last second an ISO 8601 date-time can name. */
const MAX_POSIX_SECONDS = 253_402_300_799;

const ReplayBody = z.object({
  since: z
    .union([z.number().int().nonnegative().max(MAX_POSIX_SECONDS), z.iso.datetime({ offset: true })])
    .describe(
      'POSIX seconds (like every time of the API) or an ISO 8601 date-time: events dead-lettered since then ' +
        'are sent again',
    ),
});

function baseUrl(req: FastifyRequest): string {
  return `${req.protocol}://${req.host}`;
}

/** Epoch milliseconds for the fan-out; a date-time before 1970 means everything. */
function sinceMs(since: number | string): number {
  return Math.max(0, typeof since === 'number' ? since * 1000 : Date.parse(since));
}

/**
 * `webhooks/waba/`: per-user webhooks, served by the fan-out service over request/reply.
 * Admins and the configurator manage every webhook; a user creates, sees and edits only their
 * own (others' answer 404). The secret is returned only on creation and rotation.
 */
export interface WebhookRouteOptions {
  bus: Bus;
  authenticate: (req: FastifyRequest) => Promise<Principal>;
}

/** The plugin: paths start at the resource, so it is registered with `prefix: '/api/v1'`. */
export const webhookRoutes: FastifyPluginAsync<WebhookRouteOptions> = async (
  plugin,
  { bus, authenticate },
) => {
  const app = plugin.withTypeProvider<ZodTypeProvider>();
  // Authenticate before body validation, like every inbox path: 401 comes before 400.
  app.addHook('onRequest', async (req) => {
    await authenticate(req);
  });
  await registerRoutes(app, bus, authenticate);
};

export async function registerWebhookRoutes(root: HttpServer, deps: WebhookRouteOptions): Promise<void> {
  await root.register(webhookRoutes, { prefix: '/api/v1', ...deps });
}

async function registerRoutes(
  app: FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, FastifyBaseLogger, ZodTypeProvider>,
  bus: Bus,
  authenticate: (req: FastifyRequest) => Promise<Principal>,
): Promise<void> {
  app.get(
    BASE,
    {
      schema: {
        tags,
        security,
        summary: 'List webhooks',
        description: 'Admins and the configurator see every webhook; users see their own.',
        querystring: ListQuery,
        response: { 200: page(Webhook) },
      },
    },
    async (req) => {
      const principal = await authenticate(req);
      const { limit, offset, owner } = req.query;
      const found = await callService(bus, fanoutRpc.list, {
        principal,
        limit,
        offset,
        ...(owner !== undefined ? { owner } : {}),
      });
      return pageOf(req.url, baseUrl(req), req.query, found);
    },
  );

  app.post(
    BASE,
    {
      schema: {
        tags,
        security,
        summary: 'Create a webhook',
        description: 'The new webhook receives every event published after this call returns.',
        body: CreateBody,
        response: { 201: WebhookCreated },
      },
    },
    async (req, reply) => {
      const principal = await authenticate(req);
      const b = req.body;
      const created = await callService(bus, fanoutRpc.create, {
        principal,
        url: b.url,
        ...(b.enabled !== undefined ? { enabled: b.enabled } : {}),
        ...(b.ordered !== undefined ? { ordered: b.ordered } : {}),
        ...(b.headers !== undefined ? { headers: b.headers } : {}),
        ...(b.secret !== undefined ? { secret: b.secret } : {}),
      });
      return reply.status(201).send(created);
    },
  );

  app.get(
    `${BASE}:id/`,
    {
      schema: { tags, security, summary: 'Inspect a webhook', params: IdParams, response: { 200: Webhook } },
    },
    async (req) => {
      const principal = await authenticate(req);
      return callService(bus, fanoutRpc.get, { principal, id: req.params.id });
    },
  );

  const update = (summary: string, body: typeof PutBody | typeof PatchBody) =>
    ({
      schema: { tags, security, summary, params: IdParams, body, response: { 200: Webhook } },
    }) as const;

  const applyUpdate = async (req: FastifyRequest, id: string, b: z.output<typeof PatchBody>) => {
    const principal = await authenticate(req);
    return callService(bus, fanoutRpc.update, {
      principal,
      id,
      ...(b.url !== undefined ? { url: b.url } : {}),
      ...(b.enabled !== undefined ? { enabled: b.enabled } : {}),
      ...(b.ordered !== undefined ? { ordered: b.ordered } : {}),
      ...(b.headers !== undefined ? { headers: b.headers } : {}),
    });
  };

  app.put(`${BASE}:id/`, update('Re-target a webhook', PutBody), async (req) =>
    applyUpdate(req, req.params.id, req.body),
  );
  app.patch(`${BASE}:id/`, update('Update a webhook', PatchBody), async (req) =>
    applyUpdate(req, req.params.id, req.body),
  );

  app.delete(
    `${BASE}:id/`,
    {
      schema: {
        tags,
        security,
        summary: 'Delete a webhook',
        description: 'Deliveries stop at once; its attempt log and dead letters are deleted with it.',
        params: IdParams,
        response: { 204: z.null() },
      },
    },
    async (req, reply) => {
      const principal = await authenticate(req);
      await callService(bus, fanoutRpc.delete, { principal, id: req.params.id });
      return reply.status(204).send(null);
    },
  );

  app.get(
    `${BASE}:id/test/`,
    {
      schema: {
        tags,
        security,
        summary: 'Test a webhook',
        description:
          'Sends one network-shaped test event (marked `"test": true`) to the webhook now, signed like every ' +
          'delivery, and returns the outcome of that attempt. No retries; works on disabled webhooks too.',
        params: IdParams,
        response: { 200: TestOutcome },
      },
    },
    async (req) => {
      const principal = await authenticate(req);
      return callService(
        bus,
        fanoutRpc.test,
        { principal, id: req.params.id },
        { timeoutMs: WEBHOOK_TEST_RPC_TIMEOUT_MS },
      );
    },
  );

  app.get(
    `${BASE}:id/deliveries/`,
    {
      schema: {
        tags,
        security,
        summary: 'Delivery attempts of a webhook',
        description:
          'Every attempt, newest first: status, duration, error class, first 4 KB of the response.',
        params: IdParams,
        querystring: Pagination,
        response: { 200: page(DeliveryAttempt) },
      },
    },
    async (req) => {
      const principal = await authenticate(req);
      const { limit, offset } = req.query;
      const found = await callService(bus, fanoutRpc.deliveries, {
        principal,
        id: req.params.id,
        limit,
        offset,
      });
      return pageOf(req.url, baseUrl(req), req.query, found);
    },
  );

  app.post(
    `${BASE}:id/replay/`,
    {
      schema: {
        tags,
        security,
        summary: 'Replay failed events',
        description:
          'Queues again every event this webhook gave up on (attempts exhausted, 410, disabled for failing) since ' +
          '`since`, with its original `webhook-id`. The webhook must be enabled.',
        params: IdParams,
        body: ReplayBody,
        response: { 202: ReplayResultSchema },
      },
    },
    async (req, reply) => {
      const principal = await authenticate(req);
      const since = sinceMs(req.body.since);
      const result = await callService(
        bus,
        fanoutRpc.replay,
        { principal, id: req.params.id, since_ms: since },
        { timeoutMs: 60_000 },
      );
      return reply.status(202).send(result);
    },
  );

  app.post(
    `${BASE}:id/rotate_secret/`,
    {
      schema: {
        tags,
        security,
        summary: 'Rotate the signing secret',
        description:
          'Returns the new secret (shown only here). For 24 hours deliveries carry signatures of both the new and ' +
          'the previous secret, so receivers can switch without losing events.',
        params: IdParams,
        response: { 200: WebhookCreated },
      },
    },
    async (req) => {
      const principal = await authenticate(req);
      return callService(bus, fanoutRpc.rotateSecret, { principal, id: req.params.id });
    },
  );
}
