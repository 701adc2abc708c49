import { Pagination } from '@switchboard/kit';
import {
  ContactProviderCreateSchema,
  ContactProviderSchema,
  ContactProviderUpdateSchema,
  ContactProviderWithSecretSchema,
  createContactProvider,
  deleteContactProvider,
  getContactProvider,
  listContactProviders,
  updateContactProvider,
} from '@switchboard/proto';
import { resourceRoutes } from './resource-routes.ts';

/** `contact_providers/`: where contacts are read from (admins and the configurator). Registered with `prefix: '/api/v1'`. */
export const contactProviderRoutes = resourceRoutes({
  path: '/contact_providers/',
  tags: ['contacts'],
  guard: (guards) => guards.requireRole('admin', 'configurator'),
  item: ContactProviderSchema,
  list: {
    summary: 'List contact providers',
    description: 'First in precedence first (smallest `priority`).',
    query: Pagination,
    contract: listContactProviders,
  },
  create: {
    summary: 'Connect a contact provider',
    description:
      'Kind `http`: the inbox POSTs signed questions to `url` (search by name or number, look up one number) and ' +
      'reads the contacts it answers; see the pull protocol in the chats README. The signing `secret` is answered ' +
      'only here.',
    body: ContactProviderCreateSchema,
    field: 'provider',
    created: ContactProviderWithSecretSchema,
    contract: createContactProvider,
  },
  get: { summary: 'Get a contact provider', contract: getContactProvider },
  update: {
    summary: 'Change a contact provider',
    body: ContactProviderUpdateSchema,
    contract: updateContactProvider,
  },
  remove: { summary: 'Disconnect a contact provider', contract: deleteContactProvider },
});
