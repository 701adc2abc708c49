import { createSecretBox, generateSecret, type SecretBox } from '@switchboard/kit';
import type { Kysely } from 'kysely';
import { hashSecret, newId, newSecret } from '../domain/credentials.ts';
import type { ProvisionerDatabase } from '../store/db.ts';
import { insertPartner, partnerIdByKeyHash } from '../store/partners.ts';

export interface NewPartner {
  partner_id: string;
  /** Shown once: only its hash is kept. */
  api_key: string;
  /** Verifies the partner's events (Standard Webhooks); shown once, kept sealed for signing. */
  webhook_secret: string;
}

/** The box sealing what the provisioner must read again; one purpose for all of it. */
export function provisionerBox(provisionerSecretKey: string): SecretBox {
  return createSecretBox(provisionerSecretKey, 'provisioner-secrets');
}

export async function createPartner(
  deps: { db: Kysely<ProvisionerDatabase>; box: SecretBox },
  name: string,
): Promise<NewPartner> {
  const partner_id = newId('pa');
  const api_key = newSecret('sbp_');
  const webhook_secret = generateSecret();
  await insertPartner(deps.db, {
    id: partner_id,
    name,
    api_key_hash: hashSecret(api_key),
    webhook_secret_sealed: deps.box.seal(webhook_secret),
  });
  return { partner_id, api_key, webhook_secret };
}

export async function authenticatePartner(
  deps: { db: Kysely<ProvisionerDatabase> },
  apiKey: string,
): Promise<{ partner_id: string | null }> {
  return { partner_id: await partnerIdByKeyHash(deps.db, hashSecret(apiKey)) };
}
