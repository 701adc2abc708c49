import { createSecretBox, type SecretBox } from '@switchboard/kit';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import type { FanoutDatabase, StoredWebhookRow, WebhookRow } from '../db.ts';

/**
 * The HKDF purpose of the fan-out's key: distinct from the gateway's auth-token key, so neither
 * service's sealed values open with the other's key.
 */
export const WEBHOOK_SECRETS_PURPOSE = 'fanout-webhook-secrets';

/** The box that seals webhook secrets and static headers, keyed from `INBOX_SECRET_KEY`. */
export function createWebhookSecretsBox(instanceSecretKey: string): SecretBox {
  return createSecretBox(instanceSecretKey, WEBHOOK_SECRETS_PURPOSE);
}

// The database is a boundary too: a row that does not open to this shape is refused loudly.
const SealedHeadersSchema = z.record(z.string(), z.string());

export function sealHeaders(box: SecretBox, headers: Record<string, string>): Buffer {
  return box.seal(JSON.stringify(headers));
}

export function openHeaders(box: SecretBox, sealed: Buffer): Record<string, string> {
  return SealedHeadersSchema.parse(JSON.parse(box.open(sealed)));
}

/** Opens a stored row for signing and answers. Throws when the row was sealed under another key. */
export function openWebhook(box: SecretBox, row: StoredWebhookRow): WebhookRow {
  const { sealed_headers, sealed_secret, sealed_previous_secret, ...rest } = row;
  return {
    ...rest,
    headers: openHeaders(box, sealed_headers),
    secret: box.open(sealed_secret),
    previous_secret: sealed_previous_secret ? box.open(sealed_previous_secret) : null,
  };
}

/**
 * Refuses to start with a key that does not open what is stored (INBOX_SECRET_KEY changed or
 * differs between services): otherwise every delivery would fail, one retry at a time.
 */
export async function checkSecretsKey(db: Kysely<FanoutDatabase>, box: SecretBox): Promise<void> {
  const row = await db.selectFrom('webhooks').select(['id', 'sealed_secret']).limit(1).executeTakeFirst();
  if (!row) return;
  try {
    box.open(row.sealed_secret);
  } catch {
    throw new Error(
      `INBOX_SECRET_KEY does not open the stored webhook secrets (webhook ${row.id}): it is not the key they were sealed with`,
    );
  }
}
