import type { Logger, SecretBox } from '@switchboard/kit';
import { type Principal, ServiceError } from '@switchboard/proto';
import type { Bus } from '@switchboard/proto/bus';
import type { ContactCheckClient, NetworkClient } from '@switchboard/proto/network';
import type { ContactProviderClient } from '../adapters/http-contact-provider.ts';
import type { createTtlCache, ProviderContact } from '../domain/contact-merge.ts';
import type { Db } from './types.ts';

/** What the organisation use cases (contacts, providers, tags, taggings, saved responses) need. */
export interface OrganisationDeps {
  db: Db;
  bus: Bus;
  log: Logger;
  network: NetworkClient;
  contactCheck: ContactCheckClient;
  providers: ContactProviderClient;
  /** Seals provider secrets; null when the instance secret is not configured for chats. */
  providerSecrets: SecretBox | null;
  contactCache: ReturnType<typeof createTtlCache<ProviderContact[]>>;
}

/** Managing contact providers: admins and the configurator. */
export function assertMayManageProviders(p: Principal): void {
  if (p.role !== 'admin' && p.role !== 'configurator') throw new ServiceError('permission_denied');
}
