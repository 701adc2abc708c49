/**
 * Provisioning benchmark: seconds from `POST /v1/instances` to the token event at the
 * configurator webhook, and to the first 200 of the instance's `health_check` (through the
 * edge), for 5 instances created one after another and 5 at once. The raw baseline, measured in
 * the same run, is one single-process inbox started by hand on a fresh database until its health
 * check answers: provisioning adds the provider-key resolution, the database, the streams, the
 * configurator and the signed event on top of that. Both run with Node's compile cache warm,
 * as the local runtime runs instances. Prints JSON on stdout; progress on stderr.
 *
 *   npm run bench:provisioning          (uses DATABASE_URL when set, else starts PostgreSQL and NATS)
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalInfra } from '@switchboard/testkit/infra';
import {
  freePort,
  type Receiver,
  repoRoot,
  spawnService,
  startReceiver,
  waitFor,
} from '@switchboard/testkit/tools';
import pg from 'pg';
import { request } from 'undici';
import { localhostAgent, type PartnerStack, startPartnerStack } from '../../test/support/partner.ts';
import { round } from '../stats.ts';

const log = (msg: string) => process.stderr.write(`[bench:provisioning] ${msg}\n`);
const INSTANCES = 5;
const TARGET_SECONDS = 10;

interface Timing {
  token_s: number;
  health_s: number;
}

async function healthyAt(url: string, since: number, deadlineMs = 120_000): Promise<number> {
  for (;;) {
    try {
      const res = await request(url, { dispatcher: localhostAgent });
      await res.body.dump();
      if (res.statusCode === 200) return performance.now();
    } catch {
      // the edge answers before the instance does
    }
    if (performance.now() - since > deadlineMs) throw new Error(`${url} not healthy in time`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function provisionOne(stack: PartnerStack, receiver: Receiver, apiKey: string): Promise<Timing> {
  const number = await stack.newNumber();
  const started = performance.now();
  const res = await stack.partner('POST', '/v1/instances', {
    key: apiKey,
    body: {
      provider_api_key: number.api_key,
      configurator: { user_name: 'configurator', webhook_url: receiver.url },
    },
  });
  if (res.status !== 202) throw new Error(`create answered ${res.status}: ${await res.text()}`);
  const instance = (await res.json()) as { id: string; health_check: string };
  const healthy = healthyAt(instance.health_check, started);
  let tokenAt = 0;
  await waitFor(
    async () => {
      const got = receiver.requests.find((r) => r.headers['webhook-id'] === `msg_token_${instance.id}`);
      tokenAt = got?.at ?? 0;
      return got !== undefined;
    },
    120_000,
    () => `token event for ${instance.id}`,
  );
  const healthAt = await healthy;
  return { token_s: round((tokenAt - started) / 1000, 2), health_s: round((healthAt - started) / 1000, 2) };
}

/** One inbox started by hand, for the baseline: spawn to health 200. */
async function rawInboxStart(natsUrl: string, adminUrl: string, compileCache: string): Promise<number> {
  const name = `bench_raw_${randomBytes(4).toString('hex')}`;
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  await client.query(`create database "${name}"`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const port = await freePort();
  const started = performance.now();
  const inbox = spawnService(join(repoRoot, 'services/inbox/src/main.ts'), {
    DATABASE_URL: url.toString(),
    NATS_URL: natsUrl,
    NODE_COMPILE_CACHE: compileCache,
    INSTANCE_ID: `raw-${randomBytes(4).toString('hex')}`,
    PORT: String(port),
    INBOX_SECRET_KEY: randomBytes(32).toString('base64url'),
    INBOX_ADMIN_PASSWORD: 'Quiet copper lantern 31',
    NETWORK_API_KEY: 'unused',
    NETWORK_BASE_URL: 'http://127.0.0.1:9',
  });
  try {
    await waitFor(
      async () =>
        (await fetch(`http://127.0.0.1:${port}/api/v1/status/health/`).catch(() => undefined))?.status ===
        200,
      120_000,
      () => `raw inbox (${inbox.output()})`,
    );
    return round((performance.now() - started) / 1000, 2);
  } finally {
    await inbox.stop();
    await client.query(`drop database if exists "${name}" with (force)`);
    await client.end();
  }
}

function summary(timings: Timing[]) {
  const max = (k: keyof Timing) => Math.max(...timings.map((t) => t[k]));
  const median = (k: keyof Timing) => {
    const sorted = timings.map((t) => t[k]).sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
  };
  return {
    instances: timings,
    token_s: { median: median('token_s'), max: max('token_s') },
    health_s: { median: median('health_s'), max: max('health_s') },
  };
}

async function main(): Promise<void> {
  const stops: Array<() => Promise<unknown>> = [];
  try {
    const infra = await startLocalInfra({ fast: true });
    stops.push(() => infra.stop());
    const prefix = `bench_prov_${randomBytes(3).toString('hex')}_`;
    const provisioningUrl = await infra.createDatabase('bench_provisioning');
    // Instance databases are created by the provisioner: dropped here, whatever server this is.
    stops.unshift(async () => {
      const client = new pg.Client({ connectionString: infra.databaseUrl });
      await client.connect();
      const { rows } = await client.query<{ datname: string }>(
        'select datname from pg_database where starts_with(datname, $1)',
        [prefix],
      );
      for (const { datname } of rows) await client.query(`drop database if exists "${datname}" with (force)`);
      await client.end();
    });

    // With Node's compile cache, warmed by a first start, as the local runtime runs instances.
    log('baseline: one inbox started by hand (twice: the first warms the compile cache)');
    const cache = await mkdtemp(join(tmpdir(), 'bench-compile-cache-'));
    stops.push(() => rm(cache, { recursive: true, force: true }));
    await rawInboxStart(infra.natsUrl, infra.databaseUrl, cache);
    const baseline = await rawInboxStart(infra.natsUrl, infra.databaseUrl, cache);

    const stack = await startPartnerStack({
      natsUrl: infra.natsUrl,
      pgAdminUrl: infra.databaseUrl,
      databaseUrl: provisioningUrl,
      instanceDatabasePrefix: prefix,
    });
    stops.unshift(() => stack.stop());
    const receiver = await startReceiver({ clock: () => performance.now(), eventId: () => undefined });
    stops.unshift(() => receiver.close());
    const partner = await stack.newPartner('Benchmark partner');

    log(`${INSTANCES} instances one after another`);
    const sequential: Timing[] = [];
    for (let i = 0; i < INSTANCES; i++) sequential.push(await provisionOne(stack, receiver, partner.api_key));
    log(`${INSTANCES} instances at once`);
    const concurrent = await Promise.all(
      Array.from({ length: INSTANCES }, () => provisionOne(stack, receiver, partner.api_key)),
    );

    const seq = summary(sequential);
    const conc = summary(concurrent);
    const worst = Math.max(seq.token_s.max, seq.health_s.max, conc.token_s.max, conc.health_s.max);
    process.stdout.write(
      `${JSON.stringify(
        {
          benchmark: 'provisioning',
          machine: { cpus: cpus().length },
          baseline_raw_inbox_start_s: baseline,
          sequential: { ...seq, ratio_to_baseline: round(seq.token_s.median / baseline, 2) },
          concurrent: { ...conc, ratio_to_baseline: round(conc.token_s.median / baseline, 2) },
          target_s: TARGET_SECONDS,
          within_target: worst <= TARGET_SECONDS,
        },
        null,
        2,
      )}\n`,
    );
  } finally {
    for (const stop of stops) await stop().catch((err: unknown) => log(`cleanup: ${String(err)}`));
  }
}

await main();
