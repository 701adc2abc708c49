import { Pagination } from '@switchboard/kit';
import {
  assertMayTag,
  createMessageTagging,
  deleteMessageTagging,
  listMessageTaggings,
  MessageTaggingCreateSchema,
  MessageTaggingSchema,
} from '@switchboard/proto';
import { z } from 'zod';
import { IdText } from '../domain/schemas.ts';
import { resourceRoutes } from './resource-routes.ts';

/** `message_tagging/`: tags on messages. Registered with `prefix: '/api/v1'`. */
export const messageTaggingRoutes = resourceRoutes({
  path: '/message_tagging/',
  tags: ['tags'],
  guard: (guards) => guards.requireAllowed(assertMayTag),
  item: MessageTaggingSchema,
  list: {
    summary: 'List message taggings',
    description: 'Newest first, of messages in chats the caller may read; needs `can_use_tags`.',
    query: Pagination.extend({
      message: z.string().min(1).max(200).optional().describe('A message id or wamid.'),
      tag: IdText.optional(),
    }),
    contract: listMessageTaggings,
  },
  create: {
    summary: 'Tag a message',
    description:
      'Needs `can_use_tags` and read permission on the message’s chat. A message has a tag once: 409 `already_tagged` on a ' +
      'second time. Recorded in `message_tagging_events/` and the event log.',
    body: MessageTaggingCreateSchema,
    field: 'tagging',
    contract: createMessageTagging,
  },
  remove: { summary: 'Untag a message', contract: deleteMessageTagging },
});
