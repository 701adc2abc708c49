import { pageRows } from '@switchboard/kit';
import type { Kysely, Selectable, Transaction } from 'kysely';
import type { ChatsDatabase, ContactProvidersTable } from '../db.ts';

type Db = Kysely<ChatsDatabase>;
type Writer = Kysely<ChatsDatabase> | Transaction<ChatsDatabase>;
export type ContactProviderRow = Selectable<ContactProvidersTable>;

export async function pageContactProviders(
  db: Db,
  page: { limit: number; offset: number },
): Promise<{ count: number; rows: ContactProviderRow[] }> {
  return pageRows(db.selectFrom('contact_providers'), page, (q) =>
    q.selectAll().orderBy('priority').orderBy('id'),
  );
}

/** The providers asked for contacts, first in precedence first. */
export async function enabledContactProviders(db: Db): Promise<ContactProviderRow[]> {
  return db
    .selectFrom('contact_providers')
    .selectAll()
    .where('enabled', '=', true)
    .orderBy('priority')
    .orderBy('id')
    .execute();
}

export async function findContactProvider(db: Writer, id: number): Promise<ContactProviderRow | undefined> {
  return db.selectFrom('contact_providers').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function insertContactProvider(
  db: Writer,
  p: Omit<ContactProviderRow, 'id' | 'created_at' | 'updated_at'>,
): Promise<ContactProviderRow> {
  return db.insertInto('contact_providers').values(p).returningAll().executeTakeFirstOrThrow();
}

export async function updateContactProviderRow(
  db: Writer,
  id: number,
  c: { [K in 'name' | 'url' | 'priority' | 'enabled' | 'timeout_ms']?: ContactProviderRow[K] | undefined },
): Promise<ContactProviderRow | undefined> {
  const changes = Object.fromEntries(Object.entries(c).filter(([, v]) => v !== undefined));
  return db
    .updateTable('contact_providers')
    .set({ ...changes, updated_at: new Date() })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

export async function deleteContactProviderRow(db: Writer, id: number): Promise<boolean> {
  const res = await db.deleteFrom('contact_providers').where('id', '=', id).executeTakeFirst();
  return res.numDeletedRows > 0n;
}

export async function insertContactReport(
  db: Writer,
  r: { wa_id: string; reason: string; user_id: number },
): Promise<void> {
  await db.insertInto('contact_reports').values(r).execute();
}
