import type { Kysely } from 'kysely';
import type { ProvisionerDatabase } from './db.ts';

export async function insertPartner(
  db: Kysely<ProvisionerDatabase>,
  row: { id: string; name: string; api_key_hash: string; webhook_secret_sealed: Buffer },
): Promise<void> {
  await db.insertInto('partners').values(row).execute();
}

export async function partnerIdByKeyHash(
  db: Kysely<ProvisionerDatabase>,
  hash: string,
): Promise<string | null> {
  const row = await db
    .selectFrom('partners')
    .select('id')
    .where('api_key_hash', '=', hash)
    .executeTakeFirst();
  return row?.id ?? null;
}

export async function partnerExists(db: Kysely<ProvisionerDatabase>, id: string): Promise<boolean> {
  const row = await db.selectFrom('partners').select('id').where('id', '=', id).executeTakeFirst();
  return row !== undefined;
}

export async function partnerSigningSecret(db: Kysely<ProvisionerDatabase>, id: string): Promise<Buffer> {
  const row = await db
    .selectFrom('partners')
    .select('webhook_secret_sealed')
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  return row.webhook_secret_sealed;
}
