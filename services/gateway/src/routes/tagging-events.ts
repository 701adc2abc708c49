import { Pagination, page, pageOf } from '@switchboard/kit';
import {
  assertMayTag,
  listTaggingEvents,
  TaggingEventSchema,
  type TaggingTarget,
  WaIdSchema,
} from '@switchboard/proto';
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { IdText } from '../domain/schemas.ts';
import { principalOf, security } from '../http/guards.ts';
import { callService } from './bus-call.ts';
import type { ServiceRouteOptions } from './messaging-views.ts';

const tags = ['tags'];
const Seconds = z.coerce.number().int().min(0).max(253_402_300_799);
const Filters = Pagination.extend({
  tag: IdText.optional(),
  chat: WaIdSchema.optional(),
  user: IdText.optional(),
  since: Seconds.optional().describe('POSIX seconds: only events at or after it.'),
  until: Seconds.optional().describe('POSIX seconds: only events before it.'),
});

const MessageFilters = Filters.extend({
  message: z.string().min(1).max(200).optional().describe('A message id or wamid.'),
});

/** `chat_tagging_events/` and `message_tagging_events/`: who tagged what, when. Registered with `prefix: '/api/v1'`. */
export const taggingEventRoutes: FastifyPluginAsync<ServiceRouteOptions> = async (plugin, deps) => {
  const app = plugin.withTypeProvider<ZodTypeProvider>();
  const { bus } = deps;
  const taggers = deps.guards.requireAllowed(assertMayTag);

  /** `<target>_tagging_events/`: the history of one kind of tagging, filtered as `querystring` allows. */
  function history(
    target: TaggingTarget,
    querystring: typeof Filters | typeof MessageFilters,
    docs: { summary: string; description: string },
  ) {
    app.get(
      `/${target}_tagging_events/`,
      {
        onRequest: taggers,
        schema: { tags, security, ...docs, querystring, response: { 200: page(TaggingEventSchema) } },
      },
      async (req) => {
        const { limit, offset, ...rest } = req.query;
        const filters = Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined));
        const found = await callService(bus, listTaggingEvents, {
          principal: principalOf(req),
          target,
          filters,
          limit,
          offset,
        });
        return pageOf(req.url, deps.publicUrl, req.query, found);
      },
    );
  }

  history('chat', Filters, {
    summary: 'Chat tagging history',
    description:
      'Each tag `added` to or `removed` from a chat the caller may read, newest first; needs `can_use_tags`.',
  });
  history('message', MessageFilters, {
    summary: 'Message tagging history',
    description:
      'Each tag `added` to or `removed` from a message in a chat the caller may read, newest first; needs `can_use_tags`.',
  });
};
