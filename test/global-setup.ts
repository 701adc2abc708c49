import { chatsMigrations } from '@switchboard/chats';
import { fanoutMigrations } from '@switchboard/fanout';
import { gatewayMigrations } from '@switchboard/gateway';
import { createDb, migrate } from '@switchboard/kit';
import { mediaMigrations } from '@switchboard/media';
import { databaseUrlFor, startLocalInfra } from '@switchboard/testkit/infra';
import pg from 'pg';
import type { TestProject } from 'vitest/node';

/**
 * The integration project's infrastructure, started once per run: a nats-server of its own
 * with a temporary store, and PostgreSQL (DATABASE_URL when set, else embedded on a free port).
 * NATS_URL is not used: a developer's server may lack the 8 MB max_payload the tests need.
 * Builds one migrated template database that every test file clones.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const infra = await startLocalInfra({ fast: true, use: { databaseUrl: process.env.DATABASE_URL } });
  const adminUrl = infra.databaseUrl;

  const runId = Math.random().toString(36).slice(2, 8);
  const prefix = `sbt_${runId}_`;
  const template = `${prefix}template`;
  const admin = new pg.Client({ connectionString: adminUrl });
  try {
    await admin.connect();
    await admin.query(`create database "${template}"`);
    const db = createDb({
      url: databaseUrlFor(adminUrl, template),
      applicationName: 'switchboard-test-template',
      max: 1,
    });
    try {
      await migrate(db, 'gateway', gatewayMigrations);
      await migrate(db, 'chats', chatsMigrations);
      await migrate(db, 'fanout', fanoutMigrations);
      await migrate(db, 'media', mediaMigrations);
    } finally {
      await db.destroy();
    }
  } catch (err) {
    await admin.end().catch(() => undefined);
    await infra.stop();
    throw err;
  }

  project.provide('natsUrl', infra.natsUrl);
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
    await infra.stop();
  };
}
