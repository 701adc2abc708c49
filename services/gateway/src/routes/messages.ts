import { InboxErrorSchema, PageLimit } from '@switchboard/kit';
import {
  getMessage,
  listMessages,
  SendMessageRequestSchema,
  sendMessage,
  WaIdSchema,
} from '@switchboard/proto';
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { principalOf, security } from '../http/guards.ts';
import { callService } from './bus-call.ts';
import {
  createExpanders,
  MessageIdParam,
  MessageOut,
  type MessagingRouteOptions,
  tags,
} from './messaging-views.ts';

/** `messages/`: send, list and get messages. Registered with `prefix: '/api/v1'`. */
export const messageRoutes: FastifyPluginAsync<MessagingRouteOptions> = async (plugin, deps) => {
  const app = plugin.withTypeProvider<ZodTypeProvider>();
  const { bus } = deps;
  const messaging = deps.guards.requireMessagingUser;
  const { expandMessages, expandMessage } = createExpanders(deps);

  app.post(
    '/messages/',
    {
      onRequest: messaging,
      schema: {
        tags,
        security,
        summary: 'Send message',
        description:
          'Accepted messages answer 202 with the stored Message (`from_us: true`, empty statuses) and are delivered ' +
          'to the network durably, with retries. Free-form types need an open customer care window ' +
          '(`contact.messaging_window_expires_at`); outside it the answer is HTTP 453 `window_closed` and nothing is ' +
          'sent. Templates are always allowed and open a new window. A network rejection shows as a `failed` status. ' +
          'Send `Idempotency-Key` to make retries safe: the same key returns the same message and sends once.',
        headers: z.object({ 'idempotency-key': z.string().min(1).max(200).optional() }),
        body: SendMessageRequestSchema,
        response: { 202: MessageOut, 400: InboxErrorSchema, 403: InboxErrorSchema, 453: InboxErrorSchema },
      },
    },
    async (req, reply) => {
      const record = await callService(bus, sendMessage, {
        principal: principalOf(req),
        message: req.body,
        ...(req.headers['idempotency-key'] && { idempotency_key: req.headers['idempotency-key'] }),
      });
      return reply.status(202).send(await expandMessage(record));
    },
  );
  app.get(
    '/messages/',
    {
      onRequest: messaging,
      schema: {
        tags,
        security,
        summary: 'List messages of a chat',
        description:
          'Newest first. Page with `before_time` (older than) or `since_time` (newer than), POSIX seconds: ' +
          'every Message carries both cursors, and `next` (older) and `previous` (newer) are the links built from ' +
          'the last and the first message of the page. A page never ends inside one second, so it may hold ' +
          'fewer than `limit` messages (or, for one second with more than `limit` messages, more).',
        querystring: z.object({
          wa_id: WaIdSchema,
          before_time: z.coerce
            .number()
            .int()
            .optional()
            .describe('POSIX seconds: only messages older than this (a message’s `before_time`).'),
          since_time: z.coerce
            .number()
            .int()
            .optional()
            .describe(
              'POSIX seconds: only messages newer than this (a message’s `since_time`), the oldest of them first ' +
                'in line for the page.',
            ),
          limit: PageLimit,
        }),
        response: {
          200: z.object({
            next: z
              .string()
              .nullable()
              .describe('Older messages: `before_time` of the last message; null when none.'),
            previous: z
              .string()
              .nullable()
              .describe(
                'Newer messages: `since_time` of the first message (also the way to poll for new ones).',
              ),
            results: z.array(MessageOut),
          }),
        },
      },
    },
    async (req) => {
      const q = req.query;
      const { results, has_older } = await callService(bus, listMessages, {
        principal: principalOf(req),
        wa_id: q.wa_id,
        limit: q.limit,
        ...(q.before_time !== undefined && { before_time: q.before_time }),
        ...(q.since_time !== undefined && { since_time: q.since_time }),
      });
      const oldest = results.at(-1);
      const newest = results[0];
      const link = (params: Record<string, string>) => {
        const u = new URL('/api/v1/messages/', deps.publicUrl);
        u.searchParams.set('wa_id', q.wa_id);
        u.searchParams.set('limit', String(q.limit));
        for (const [k, v] of Object.entries(params)) u.searchParams.set(k, v);
        return u.toString();
      };
      return {
        next: has_older && oldest ? link({ before_time: String(oldest.before_time) }) : null,
        previous: newest ? link({ since_time: String(newest.since_time) }) : null,
        results: await expandMessages(results),
      };
    },
  );
  app.get(
    '/messages/:id/',
    {
      onRequest: messaging,
      schema: {
        tags,
        security,
        summary: 'Get a message',
        description: 'By id or by the network’s wamid.',
        params: MessageIdParam,
        response: { 200: MessageOut },
      },
    },
    async (req) => {
      return expandMessage(
        await callService(bus, getMessage, { principal: principalOf(req), id: req.params.id }),
      );
    },
  );
};
