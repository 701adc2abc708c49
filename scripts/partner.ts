/**
 * `npm run partner -- create <name>`: registers a partner in the provisioning database and
 * prints its id, API key and webhook secret once (only the key's hash and the sealed secret are
 * kept). Reads PROVISIONER_DATABASE_URL and PROVISIONER_SECRET_KEY, or those of `npm start`
 * (.switchboard/local.json and .switchboard/secrets.json).
 */
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { createDb, migrate } from '@switchboard/kit';
import {
  createPartner,
  type ProvisionerDatabase,
  provisionerBox,
  provisionerMigrations,
} from '@switchboard/provisioner';
import { z } from 'zod';

const home = resolve(process.env.SWITCHBOARD_HOME ?? join(import.meta.dirname, '..', '.switchboard'));

async function localSetting(
  file: string,
  pick: (json: unknown) => string | undefined,
): Promise<string | undefined> {
  try {
    return pick(JSON.parse(await readFile(join(home, file), 'utf8')));
  } catch {
    return undefined;
  }
}

async function main(): Promise<number> {
  const [command, ...nameParts] = process.argv.slice(2);
  const name = nameParts.join(' ').trim();
  if (command !== 'create' || !name) {
    process.stderr.write('usage: npm run partner -- create <name>\n');
    return 2;
  }
  const databaseUrl =
    process.env.PROVISIONER_DATABASE_URL ||
    (await localSetting(
      'local.json',
      (j) =>
        z.object({ partner: z.object({ database_url: z.string() }) }).safeParse(j).data?.partner.database_url,
    ));
  const secretKey =
    process.env.PROVISIONER_SECRET_KEY ||
    (await localSetting(
      'secrets.json',
      (j) => z.object({ provisioner_secret_key: z.string() }).safeParse(j).data?.provisioner_secret_key,
    ));
  if (!databaseUrl || !secretKey) {
    process.stderr.write(
      'Set PROVISIONER_DATABASE_URL and PROVISIONER_SECRET_KEY (the provisioner’s), or run `npm start` first.\n',
    );
    return 2;
  }
  const db = createDb<ProvisionerDatabase>({
    url: databaseUrl,
    applicationName: 'switchboard-partner-cli',
    max: 1,
  });
  try {
    await migrate(db, 'provisioner', provisionerMigrations);
    const partner = await createPartner({ db, box: provisionerBox(secretKey) }, name);
    process.stdout.write(`partner_id      ${partner.partner_id}\n`);
    process.stdout.write(`api_key         ${partner.api_key}\n`);
    process.stdout.write(`webhook_secret  ${partner.webhook_secret}\n`);
    process.stdout.write('The key and the secret are shown only now: store them.\n');
    return 0;
  } finally {
    await db.destroy();
  }
}

process.exitCode = await main();
