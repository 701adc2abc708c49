import { generateSecret } from '@switchboard/kit';
import {
  type ContactProvider,
  type createContactProvider as createContract,
  type deleteContactProvider as deleteContract,
  type getContactProvider as getContract,
  type listContactProviders as listContract,
  posixSeconds,
  ServiceError,
  type updateContactProvider as updateContract,
} from '@switchboard/proto';
import { withAuditEntry } from '../store/audit.ts';
import {
  type ContactProviderRow,
  deleteContactProviderRow,
  findContactProvider,
  insertContactProvider,
  pageContactProviders,
  updateContactProviderRow,
} from '../store/contact-providers.ts';
import { entityAuditEntry } from './audit-entries.ts';
import { assertMayManageProviders, type OrganisationDeps } from './organisation-deps.ts';
import type { RequestOf } from './types.ts';

export const contactProviderOf = (p: ContactProviderRow): ContactProvider => ({
  id: p.id,
  name: p.name,
  kind: p.kind,
  url: p.url,
  priority: p.priority,
  enabled: p.enabled,
  timeout_ms: p.timeout_ms,
  created_at: posixSeconds(p.created_at),
  updated_at: posixSeconds(p.updated_at),
});

const notFound = () => new ServiceError('not_found', 'No contact provider with this id.');

export async function listContactProviders(deps: OrganisationDeps, r: RequestOf<typeof listContract>) {
  assertMayManageProviders(r.principal);
  const { count, rows } = await pageContactProviders(deps.db, r);
  return { count, results: rows.map(contactProviderOf) };
}

export async function getContactProvider(deps: OrganisationDeps, r: RequestOf<typeof getContract>) {
  assertMayManageProviders(r.principal);
  const row = await findContactProvider(deps.db, r.id);
  if (!row) throw notFound();
  return contactProviderOf(row);
}

/** Connects a provider; its signing secret is answered this once and kept sealed. */
export async function createContactProvider(deps: OrganisationDeps, r: RequestOf<typeof createContract>) {
  assertMayManageProviders(r.principal);
  if (!deps.providerSecrets) {
    throw new ServiceError(
      'service_unavailable',
      'chats has no INBOX_SECRET_KEY to seal provider secrets with.',
      {
        details: { dependency: 'chats' },
      },
    );
  }
  const { secret: given, ...fields } = r.provider;
  const secret = given ?? generateSecret();
  const row = await withAuditEntry(
    deps.db,
    (trx) =>
      insertContactProvider(trx, {
        ...fields,
        secret_sealed: deps.providerSecrets?.seal(secret) ?? Buffer.alloc(0),
      }),
    (created) =>
      entityAuditEntry(r.principal, 'contact_provider.created', 'contact_provider', created.id, {
        name: created.name,
        url: created.url,
      }),
  );
  return { ...contactProviderOf(row), secret };
}

export async function updateContactProvider(deps: OrganisationDeps, r: RequestOf<typeof updateContract>) {
  assertMayManageProviders(r.principal);
  const row = await withAuditEntry(
    deps.db,
    async (trx) => {
      const updated = await updateContactProviderRow(trx, r.id, r.changes);
      if (!updated) throw notFound();
      return updated;
    },
    () =>
      entityAuditEntry(r.principal, 'contact_provider.updated', 'contact_provider', r.id, { ...r.changes }),
  );
  deps.contactCache.clear();
  return contactProviderOf(row);
}

export async function deleteContactProvider(deps: OrganisationDeps, r: RequestOf<typeof deleteContract>) {
  assertMayManageProviders(r.principal);
  await withAuditEntry(
    deps.db,
    async (trx) => {
      if (!(await deleteContactProviderRow(trx, r.id))) throw notFound();
    },
    () => entityAuditEntry(r.principal, 'contact_provider.deleted', 'contact_provider', r.id, {}),
  );
  deps.contactCache.clear();
  return { deleted: true };
}
