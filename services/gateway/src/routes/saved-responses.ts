import { Pagination } from '@switchboard/kit';
import {
  assertInboxUser,
  createSavedResponse,
  deleteSavedResponse,
  getSavedResponse,
  listSavedResponses,
  SavedResponseCreateSchema,
  SavedResponseSchema,
  SavedResponseUpdateSchema,
  updateSavedResponse,
} from '@switchboard/proto';
import { z } from 'zod';
import { resourceRoutes } from './resource-routes.ts';

const authorOrAdmin = 'Its author or an admin (403 for anyone else).';

/** `saved_responses/`: text snippets shared by the instance's users. Registered with `prefix: '/api/v1'`. */
export const savedResponseRoutes = resourceRoutes({
  path: '/saved_responses/',
  tags: ['saved responses'],
  guard: (guards) => guards.requireAllowed(assertInboxUser),
  item: SavedResponseSchema,
  list: {
    summary: 'List saved responses',
    description: 'Every user’s, by name; `search` matches part of the name or the text.',
    query: Pagination.extend({ search: z.string().max(100).optional() }),
    contract: listSavedResponses,
  },
  create: {
    summary: 'Write a saved response',
    body: SavedResponseCreateSchema,
    field: 'response',
    contract: createSavedResponse,
  },
  get: { summary: 'Get a saved response', contract: getSavedResponse },
  update: {
    summary: 'Change a saved response',
    description: authorOrAdmin,
    body: SavedResponseUpdateSchema,
    contract: updateSavedResponse,
  },
  remove: { summary: 'Delete a saved response', description: authorOrAdmin, contract: deleteSavedResponse },
});
