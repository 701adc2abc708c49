import { Pagination } from '@switchboard/kit';
import {
  assertMayTag,
  ChatTaggingCreateSchema,
  ChatTaggingSchema,
  createChatTagging,
  deleteChatTagging,
  listChatTaggings,
  WaIdSchema,
} from '@switchboard/proto';
import { IdText } from '../domain/schemas.ts';
import { resourceRoutes } from './resource-routes.ts';

/** `chat_tagging/`: tags on chats. Registered with `prefix: '/api/v1'`. */
export const chatTaggingRoutes = resourceRoutes({
  path: '/chat_tagging/',
  tags: ['tags'],
  guard: (guards) => guards.requireAllowed(assertMayTag),
  item: ChatTaggingSchema,
  list: {
    summary: 'List chat taggings',
    description: 'Newest first, of chats the caller may read; needs `can_use_tags`.',
    query: Pagination.extend({ chat: WaIdSchema.optional(), tag: IdText.optional() }),
    contract: listChatTaggings,
  },
  create: {
    summary: 'Tag a chat',
    description:
      'Needs `can_use_tags` and read permission on the chat. A chat has a tag once: 409 `already_tagged` on a ' +
      'second time. Recorded in `chat_tagging_events/` and the event log.',
    body: ChatTaggingCreateSchema,
    field: 'tagging',
    contract: createChatTagging,
  },
  remove: { summary: 'Untag a chat', contract: deleteChatTagging },
});
