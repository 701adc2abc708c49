import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createDb, migrate } from '@switchboard/kit';
import {
  createPartner,
  type ProvisionerDatabase,
  provisionerBox,
  provisionerMigrations,
} from '@switchboard/provisioner';
import { freePort, waitFor } from '@switchboard/testkit/infra';
import { z } from 'zod';
import { launchService, type Supervised, supervise } from './supervisor.ts';

const PartnerSecrets = z.object({
  provisioner_secret_key: z.string().min(32),
  session_secret: z.string().min(32),
  demo: z.object({ partner_id: z.string(), api_key: z.string(), webhook_secret: z.string() }).optional(),
});
type PartnerSecrets = z.infer<typeof PartnerSecrets>;

export interface PartnerStack {
  services: Supervised[];
  /** What goes to local.json under `partner`. */
  local: {
    url: string;
    partner_id: string;
    api_key: string;
    webhook_secret: string;
    database_url: string;
    edge: string;
  };
}

/**
 * Partner provisioning for `npm start`: the provisioner (its instances are local child
 * processes behind the edge at `<subdomain>.localhost:<edge port>`) and the gateway in partner
 * mode, with a demo partner created on the first run (kept in secrets.json, 0600).
 */
export async function startPartnerStack(o: {
  repoRoot: string;
  home: string;
  databaseAdminUrl: string;
  databaseUrl: string;
  natsUrl: string;
  networkUrl: string;
  smtpUrl: string;
  color: boolean;
  say: (line: string) => void;
}): Promise<PartnerStack> {
  const file = join(o.home, 'secrets.json');
  const all = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
  const found = PartnerSecrets.safeParse(all.partner ?? all);
  const secrets: PartnerSecrets = found.success
    ? found.data
    : {
        provisioner_secret_key: randomBytes(32).toString('base64url'),
        session_secret: randomBytes(32).toString('base64url'),
      };
  const db = createDb<ProvisionerDatabase>({
    url: o.databaseUrl,
    applicationName: 'switchboard-start',
    max: 1,
  });
  try {
    await migrate(db, 'provisioner', provisionerMigrations);
    secrets.demo ??= await createPartner(
      { db, box: provisionerBox(secrets.provisioner_secret_key) },
      'Demo partner',
    );
  } finally {
    await db.destroy();
  }
  await writeFile(file, `${JSON.stringify({ ...all, ...secrets }, null, 2)}\n`, { mode: 0o600 });

  const edgePort = await freePort();
  const partnerPort = await freePort();
  const provisioner = await supervise(
    'provisioner',
    launchService(
      {
        name: 'provisioner',
        entry: join(o.repoRoot, 'services/provisioner/src/main.ts'),
        env: {
          DATABASE_URL: o.databaseUrl,
          INSTANCE_DATABASE_ADMIN_URL: o.databaseAdminUrl,
          NATS_URL: o.natsUrl,
          PROVISIONER_SECRET_KEY: secrets.provisioner_secret_key,
          EDGE_PORT: String(edgePort),
          NETWORK_BASE_URL: o.networkUrl,
          PARTNER_HUB_URL: `${o.networkUrl}/api/v2`,
          PARTNER_HUB_API_KEY: 'local-partner-hub-key',
          INSTANCE_ENTRY: join(o.repoRoot, 'services/inbox/src/main.ts'),
          INSTANCE_EXTRA_ENV: JSON.stringify({ SMTP_URL: o.smtpUrl, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' }),
          INSTANCE_LOG_DIR: join(o.home, 'instances'),
          RUNTIME_STOP_ON_EXIT: 'true',
          PARTNER_EVENTS_ALLOW_PRIVATE_TARGETS: 'true',
          SMTP_URL: o.smtpUrl,
        },
      },
      o.color,
    ),
    o.say,
  );
  const gateway = await supervise(
    'partner-gateway',
    launchService(
      {
        name: 'partner-gateway',
        entry: join(o.repoRoot, 'services/gateway/src/partner-main.ts'),
        env: {
          NATS_URL: o.natsUrl,
          PORT: String(partnerPort),
          PARTNER_SESSION_SECRET: secrets.session_secret,
        },
      },
      o.color,
    ),
    o.say,
  );
  const url = `http://127.0.0.1:${partnerPort}`;
  await waitFor(async () => (await fetch(`${url}/health`)).ok, 60_000, 'the partner API');
  return {
    services: [provisioner, gateway],
    local: { url, ...secrets.demo, database_url: o.databaseUrl, edge: `http://localhost:${edgePort}` },
  };
}
