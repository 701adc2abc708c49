import { type HttpServer, InboxErrorSchema, PageLimit, Pagination, page, pageOf } from '@switchboard/kit';
import {
  assignChat,
  type Bus,
  type ChatRecord,
  ContactSchema,
  getChat,
  getMessage,
  listChats,
  listMessages,
  listPersons,
  listTemplates,
  listWhatsappAccounts,
  MessagePageCursors,
  type MessageRecord,
  markAsReceived,
  PersonSchema,
  posixSecondsSchema,
  SendMessageRequestSchema,
  ServiceError,
  sendMessage,
  updateChat,
  WabaStatusesSchema,
  WaIdSchema,
  WhatsappAccountSchema,
} from '@switchboard/proto';
import { z } from 'zod';
import { type Guards, principalOf } from '../identity/authenticate.ts';
import type { Groups } from '../identity/groups.ts';
import { GroupOut, Id, IdText, UserOut } from '../identity/schemas.ts';
import type { Users } from '../identity/users.ts';
import { callService } from './bus-call.ts';

export interface MessagingRouteDeps {
  bus: Bus;
  guards: Guards;
  users: Users;
  groups: Groups;
  publicUrl: string;
}

export const MessageOut = z
  .object({
    id: z.string(),
    wamid: z.string().nullable().describe('The network’s message id; null until the network accepted it.'),
    type: z.string(),
    waba_payload: z
      .unknown()
      .describe('The network body of the message: as received, or as sent to the network.'),
    waba_statuses: WabaStatusesSchema.describe(
      'POSIX times of `sent`, `delivered`, `read` (a later stage implies the earlier ones), and `failed` with the network’s errors.',
    ),
    contact: ContactSchema,
    from_us: z.boolean(),
    received: z
      .boolean()
      .describe(
        'Customer messages: an inbox user marked them read (`mark_as_received/`). Always false for ours.',
      ),
    sender: UserOut.nullable().describe('The inbox user who sent it; null for customer messages.'),
    timestamp: posixSecondsSchema('when the message was sent (the network’s time for customer messages).'),
    ...MessagePageCursors.shape,
    customer_wa_id: WaIdSchema,
    tags: z.array(z.unknown()),
    chat_tags: z.array(z.unknown()),
  })
  .meta({ id: 'Message' });
type MessageOut = z.infer<typeof MessageOut>;

export const ChatOut = z
  .object({
    wa_id: WaIdSchema,
    contact: ContactSchema,
    new_messages: z.number().int(),
    last_message: MessageOut.nullable(),
    assigned_to_user: UserOut.nullable(),
    assigned_group: GroupOut.nullable(),
    resolved: z.boolean(),
    tags: z.array(z.unknown()),
  })
  .meta({ id: 'Chat' });
type ChatOut = z.infer<typeof ChatOut>;

const tags = ['messaging'];
const security = [{ token: [] }];
const WaIdParam = z.object({ wa_id: WaIdSchema });
/**
 * Our id (a UUID) or the network's wamid (`wamid.…`). Something UUID-like that is not a UUID is
 * neither, and refused here: chats would take it for an id and PostgreSQL refuse it as a uuid.
 */
const MessageIdParam = z.object({
  id: z
    .string()
    .min(1)
    .max(200)
    .refine((id) => !/^[0-9a-f-]{36}$/i.test(id) || z.guid().safeParse(id).success, {
      message: 'Not a message id: a UUID or a wamid.',
    }),
});
const Bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

export function registerMessagingRoutes(app: HttpServer, deps: MessagingRouteDeps): void {
  const { bus, guards } = deps;
  const messaging = guards.requireMessagingUser;

  async function expandMessages(records: MessageRecord[]): Promise<MessageOut[]> {
    const senders = await deps.users.byIds(
      records.flatMap((m) => (m.sender_user_id === null ? [] : [m.sender_user_id])),
    );
    return records.map(({ sender_user_id, ...m }) => ({
      ...m,
      sender: sender_user_id === null ? null : (senders.get(sender_user_id) ?? null),
    }));
  }

  async function expandChats(records: ChatRecord[]): Promise<ChatOut[]> {
    const users = await deps.users.byIds(
      records.flatMap((c) => (c.assigned_to_user_id === null ? [] : [c.assigned_to_user_id])),
    );
    const groups = await deps.groups.byIds(
      records.flatMap((c) => (c.assigned_group_id === null ? [] : [c.assigned_group_id])),
    );
    const lasts = await expandMessages(records.flatMap((c) => (c.last_message ? [c.last_message] : [])));
    const lastByChat = new Map(lasts.map((m) => [m.customer_wa_id, m]));
    return records.map(({ assigned_to_user_id, assigned_group_id, last_message, ...c }) => ({
      ...c,
      last_message: last_message ? (lastByChat.get(c.wa_id) ?? null) : null,
      assigned_to_user: assigned_to_user_id === null ? null : (users.get(assigned_to_user_id) ?? null),
      assigned_group: assigned_group_id === null ? null : (groups.get(assigned_group_id) ?? null),
    }));
  }

  const expandMessage = async (m: MessageRecord) => {
    const [out] = await expandMessages([m]);
    if (!out) throw new ServiceError('not_found', 'No message with this id.');
    return out;
  };

  const expandChat = async (c: ChatRecord) => {
    const [out] = await expandChats([c]);
    if (!out) throw new ServiceError('not_found', 'No chat with this wa_id.');
    return out;
  };

  app.post(
    '/api/v1/messages/',
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
    '/api/v1/messages/',
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
    '/api/v1/messages/:id/',
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

  app.get(
    '/api/v1/chats/',
    {
      onRequest: messaging,
      schema: {
        tags,
        security,
        summary: 'List chats',
        description:
          'Newest activity first, only chats the user may read. `new_messages` counts customer messages after the ' +
          'user’s read mark (`mark_as_received/`).',
        querystring: Pagination.extend({
          unread: Bool.optional(),
          resolved: Bool.optional(),
          assigned_to_user: IdText.optional(),
          assigned_group: IdText.optional(),
          search: z.string().max(100).optional(),
        }),
        response: { 200: page(ChatOut) },
      },
    },
    async (req) => {
      const { limit, offset, unread, resolved, assigned_to_user, assigned_group, search } = req.query;
      const { count, results } = await callService(bus, listChats, {
        principal: principalOf(req),
        limit,
        offset,
        filters: {
          ...(unread !== undefined && { unread }),
          ...(resolved !== undefined && { resolved }),
          ...(assigned_to_user !== undefined && { assigned_to_user }),
          ...(assigned_group !== undefined && { assigned_group }),
          ...(search && { search }),
        },
      });
      return pageOf(req.url, deps.publicUrl, req.query, { count, results: await expandChats(results) });
    },
  );

  app.get(
    '/api/v1/chats/:wa_id/',
    {
      onRequest: messaging,
      schema: { tags, security, summary: 'Get a chat', params: WaIdParam, response: { 200: ChatOut } },
    },
    async (req) =>
      expandChat(await callService(bus, getChat, { principal: principalOf(req), wa_id: req.params.wa_id })),
  );

  app.patch(
    '/api/v1/chats/:wa_id/',
    {
      onRequest: messaging,
      schema: {
        tags,
        security,
        summary: 'Resolve or reopen a chat',
        params: WaIdParam,
        body: z.object({ resolved: z.boolean() }),
        response: { 200: ChatOut },
      },
    },
    async (req) =>
      expandChat(
        await callService(bus, updateChat, {
          principal: principalOf(req),
          wa_id: req.params.wa_id,
          resolved: req.body.resolved,
        }),
      ),
  );

  app.patch(
    '/api/v1/chat_assignment/:wa_id/',
    {
      onRequest: messaging,
      schema: {
        tags,
        security,
        summary: 'Assign a chat',
        description: 'To a user and/or a group; `null` unassigns. Assigning a resolved chat reopens it.',
        params: WaIdParam,
        body: z.object({
          assigned_to_user: Id.nullable().optional(),
          assigned_group: Id.nullable().optional(),
        }),
        response: { 200: ChatOut },
      },
    },
    async (req) => {
      const { assigned_to_user, assigned_group } = req.body;
      if (assigned_to_user) {
        const user = (await deps.users.byIds([assigned_to_user])).get(assigned_to_user);
        if (!user?.is_active || user.profile.role === 'configurator') {
          throw ServiceError.validation({ assigned_to_user: ['No active user with this id.'] });
        }
      }
      if (assigned_group && !(await deps.groups.byIds([assigned_group])).has(assigned_group)) {
        throw ServiceError.validation({ assigned_group: ['No group with this id.'] });
      }
      return expandChat(
        await callService(bus, assignChat, {
          principal: principalOf(req),
          wa_id: req.params.wa_id,
          ...(assigned_to_user !== undefined && { assigned_to_user }),
          ...(assigned_group !== undefined && { assigned_group }),
        }),
      );
    },
  );

  app.post(
    '/api/v1/mark_as_received/',
    {
      onRequest: messaging,
      schema: {
        tags,
        security,
        summary: 'Read mark',
        description: 'Customer messages of that chat up to `timestamp` count as read for the calling user.',
        body: z.object({ customer_wa_id: WaIdSchema, timestamp: z.number().int().positive() }),
        response: { 200: markAsReceived.response },
      },
    },
    async (req) => callService(bus, markAsReceived, { principal: principalOf(req), ...req.body }),
  );

  app.get(
    '/api/v1/persons/',
    {
      onRequest: messaging,
      schema: {
        tags,
        security,
        summary: 'Persons',
        description:
          'Customers who wrote to the inbox, named as the network names them. `search` matches number or name.',
        querystring: Pagination.extend({ search: z.string().max(100).optional() }),
        response: { 200: page(PersonSchema) },
      },
    },
    async (req) => {
      const { limit, offset, search } = req.query;
      const found = await callService(bus, listPersons, {
        principal: principalOf(req),
        limit,
        offset,
        ...(search && { search }),
      });
      return pageOf(req.url, deps.publicUrl, req.query, found);
    },
  );

  app.get(
    '/api/v1/templates/',
    {
      onRequest: guards.requireUser,
      schema: {
        tags,
        security,
        summary: 'List templates',
        description:
          'Read from the network and cached; `?refresh=true` reads them again. A list like every other: ' +
          '`limit`/`offset`, plus `fetched_at`, when the templates were read from the network.',
        querystring: Pagination.extend({ refresh: Bool.optional() }),
        response: {
          200: page(z.looseObject({})).extend({ fetched_at: listTemplates.response.shape.fetched_at }),
        },
      },
    },
    async (req) => {
      const { limit, offset, refresh } = req.query;
      const { fetched_at, ...found } = await callService(bus, listTemplates, {
        refresh: refresh ?? false,
        limit,
        offset,
      });
      return { ...pageOf(req.url, deps.publicUrl, req.query, found), fetched_at };
    },
  );

  app.get(
    '/api/v1/whatsapp_accounts/',
    {
      onRequest: guards.requireUser,
      schema: {
        tags,
        security,
        summary: 'Connected number',
        description: 'The business number of this inbox (one), as a list like every other.',
        querystring: Pagination,
        response: { 200: page(WhatsappAccountSchema) },
      },
    },
    async (req) => {
      const { limit, offset } = req.query;
      const found = await callService(bus, listWhatsappAccounts, { limit, offset });
      return pageOf(req.url, deps.publicUrl, req.query, found);
    },
  );
}
