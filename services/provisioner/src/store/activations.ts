import type { Kysely } from 'kysely';
import type { ProvisionerDatabase } from './db.ts';

export async function insertActivationToken(
  db: Kysely<ProvisionerDatabase>,
  tokenHash: string,
  instanceId: string,
): Promise<void> {
  await db
    .insertInto('activation_tokens')
    .values({ token_hash: tokenHash, instance_id: instanceId })
    .execute();
}

/** Forgets a token whose mail was never sent. */
export async function deleteActivationToken(
  db: Kysely<ProvisionerDatabase>,
  tokenHash: string,
): Promise<void> {
  await db.deleteFrom('activation_tokens').where('token_hash', '=', tokenHash).execute();
}

export async function activationToken(db: Kysely<ProvisionerDatabase>, tokenHash: string) {
  return db
    .selectFrom('activation_tokens')
    .selectAll()
    .where('token_hash', '=', tokenHash)
    .executeTakeFirst();
}

/** Marks the token used; false when it already was (two clicks at once: one wins). */
export async function useActivationToken(
  db: Kysely<ProvisionerDatabase>,
  tokenHash: string,
): Promise<boolean> {
  const res = await db
    .updateTable('activation_tokens')
    .set({ used_at: new Date() })
    .where((eb) => eb.and([eb('token_hash', '=', tokenHash), eb('used_at', 'is', null)]))
    .executeTakeFirst();
  return res.numUpdatedRows > 0n;
}

export async function releaseActivationToken(
  db: Kysely<ProvisionerDatabase>,
  tokenHash: string,
): Promise<void> {
  await db
    .updateTable('activation_tokens')
    .set({ used_at: null })
    .where('token_hash', '=', tokenHash)
    .execute();
}
