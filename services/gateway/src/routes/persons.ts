import { Pagination } from '@switchboard/kit';
import { listPersons, PersonSchema } from '@switchboard/proto';
import { z } from 'zod';
import { tags } from './messaging-views.ts';
import { resourceRoutes } from './resource-routes.ts';

/** `persons/`: the customers who wrote to the inbox. Registered with `prefix: '/api/v1'`. */
export const personRoutes = resourceRoutes({
  path: '/persons/',
  tags,
  guard: (guards) => guards.requireMessagingUser,
  item: PersonSchema,
  list: {
    summary: 'Persons',
    description:
      'Customers who wrote to the inbox, named as the network names them, the one who wrote last first. `search` matches number or name.',
    query: Pagination.extend({ search: z.string().max(100).optional() }),
    contract: listPersons,
  },
});
