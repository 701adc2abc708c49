import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chatsMigrations } from '@switchboard/chats';
import { fanoutMigrations } from '@switchboard/fanout';
import { gatewayMigrations } from '@switchboard/gateway';
import { createDb, migrate } from '@switchboard/kit';
import { startEmbeddedPostgres, startNatsServer } from '@switchboard/kit/infra';
import pg from 'pg';
import type { TestProject } from 'vitest/node';

/**
 * Starts the run's real infrastructure once: a nats-server child process with a temporary
 * store, and PostgreSQL (DATABASE_URL when set, else embedded on a free port). Builds one
 * migrated template database that every test file clones.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const work = await mkdtemp(join(tmpdir(), 'switchboard-test-'));
  // Run as root, PostgreSQL runs as the `postgres` user and must enter its data directory;
  // where it cannot (a TMPDIR in a private home), kit puts the cluster elsewhere (dataDir).
  await chmod(work, 0o755);
  const nats = await startNatsServer({ storeDir: join(work, 'nats') });
  const embedded = process.env.DATABASE_URL
    ? undefined
    : await startEmbeddedPostgres({ dataDir: join(work, 'pg'), fast: true }).catch(async (err: unknown) => {
        await nats.stop();
        throw err;
      });
  const adminUrl = process.env.DATABASE_URL ?? (embedded?.url as string);

  const runId = Math.random().toString(36).slice(2, 8);
  const prefix = `sbt_${runId}_`;
  const template = `${prefix}template`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database "${template}"`);
  const templateUrl = new URL(adminUrl);
  templateUrl.pathname = `/${template}`;
  const db = createDb({ url: templateUrl.toString(), applicationName: 'switchboard-test-template', max: 1 });
  await migrate(db, 'gateway', gatewayMigrations);
  await migrate(db, 'chats', chatsMigrations);
  await migrate(db, 'fanout', fanoutMigrations);
  await db.destroy();

  project.provide('natsUrl', nats.url);
  project.provide('pgAdminUrl', adminUrl);
  project.provide('templateDatabase', template);
  project.provide('databasePrefix', prefix);

  return async () => {
    const { rows } = await admin.query<{ datname: string }>(
      'select datname from pg_database where starts_with(datname, $1)',
      [prefix],
    );
    for (const { datname } of rows) await admin.query(`drop database if exists "${datname}" with (force)`);
    await admin.end();
    await nats.stop();
    await embedded?.stop();
    await rm(work, { recursive: true, force: true });
    if (embedded) await rm(embedded.dataDir, { recursive: true, force: true });
  };
}
