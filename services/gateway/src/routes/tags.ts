import { Pagination } from '@switchboard/kit';
import {
  assertMayUseTags,
  createTag,
  deleteTag,
  getTag,
  listTags,
  TagCreateSchema,
  TagSchema,
  TagUpdateSchema,
  updateTag,
} from '@switchboard/proto';
import { z } from 'zod';
import { resourceRoutes } from './resource-routes.ts';

/** `tags/`: the instance's tags (users with `can_use_tags`). Registered with `prefix: '/api/v1'`. */
export const tagRoutes = resourceRoutes({
  path: '/tags/',
  tags: ['tags'],
  guard: (guards) => guards.requireAllowed(assertMayUseTags),
  item: TagSchema,
  list: {
    summary: 'List tags',
    description: 'By name; `search` matches part of it. Only for users with `can_use_tags` (403 otherwise).',
    query: Pagination.extend({ search: z.string().max(100).optional() }),
    contract: listTags,
  },
  create: {
    summary: 'Create a tag',
    description: '`name` is unique in the instance (any letter case): 409 `tag_name_taken` otherwise.',
    body: TagCreateSchema,
    field: 'tag',
    contract: createTag,
  },
  get: { summary: 'Get a tag', contract: getTag },
  update: { summary: 'Change a tag', body: TagUpdateSchema, contract: updateTag },
  remove: {
    summary: 'Delete a tag',
    description: 'Removes its taggings too; each removal is recorded in the tagging events.',
    contract: deleteTag,
  },
});
