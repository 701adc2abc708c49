import type { Migration, SecretBox } from '@switchboard/kit';
import { type Kysely, sql } from 'kysely';

export const SEALED_SECRETS_MIGRATION = '0002_sealed_secrets';

interface PlainRow {
  id: string;
  secret: string;
  previous_secret: string | null;
  headers: Record<string, string>;
}

async function sealRows(db: Kysely<unknown>, box: SecretBox, rows: readonly PlainRow[]): Promise<void> {
  for (const row of rows) {
    // The new row version carries no plaintext; the old one is dead and goes with vacuum.
    await sql`
      update webhooks set
        sealed_secret = ${box.seal(row.secret)},
        sealed_previous_secret = ${row.previous_secret === null ? null : box.seal(row.previous_secret)},
        sealed_headers = ${box.seal(JSON.stringify(row.headers))},
        secret = null,
        previous_secret = null,
        headers = '{}'::jsonb
      where id = ${row.id}
    `.execute(db);
  }
}

/**
 * Replaces the plaintext secret, previous secret and static headers with values sealed by the
 * instance key. Existing rows are sealed in the migration's transaction, so no plaintext
 * column outlives it. Without a box the migration only runs on a database without webhooks
 * (test templates, benchmarks); it refuses rather than lose or leave plaintext credentials.
 */
export function m0002SealedSecrets(box: SecretBox | undefined): Migration {
  return {
    name: SEALED_SECRETS_MIGRATION,
    async up(db: Kysely<unknown>) {
      await sql`
        alter table webhooks
          add column sealed_secret bytea,
          add column sealed_previous_secret bytea,
          add column sealed_headers bytea,
          alter column secret drop not null
      `.execute(db);
      const { rows } = await sql<PlainRow>`
        select id, secret, previous_secret, headers from webhooks order by id for update
      `.execute(db);
      if (rows.length > 0 && !box) {
        throw new Error(
          `${SEALED_SECRETS_MIGRATION} must encrypt ${rows.length} existing webhooks: run it with the instance key (INBOX_SECRET_KEY)`,
        );
      }
      if (box) await sealRows(db, box, rows);
      await sql`
        alter table webhooks
          drop column secret,
          drop column previous_secret,
          drop column headers,
          alter column sealed_secret set not null,
          alter column sealed_headers set not null
      `.execute(db);
    },
  };
}
