import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ChatsConfigSchema } from '@switchboard/chats/config';
import { FanoutConfigSchema } from '@switchboard/fanout';
import { GatewayConfigSchema } from '@switchboard/gateway/config';
import { MediaConfigSchema } from '@switchboard/media';
import { repoRoot } from '@switchboard/testkit';
import { natsServerBinary } from '@switchboard/testkit/infra';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { z } from 'zod';

const Container = z.object({
  name: z.string(),
  command: z.array(z.string()),
  env: z.array(z.object({ name: z.string(), value: z.string() })).optional(),
});
const Deployment = z.object({
  kind: z.literal('Deployment'),
  metadata: z.object({ name: z.string() }),
  spec: z.object({ template: z.object({ spec: z.object({ containers: z.array(Container).length(1) }) }) }),
});
const ConfigMap = z.object({ kind: z.literal('ConfigMap'), data: z.record(z.string(), z.string()) });

/** The secret the instance README tells operators to create, with values of the right shape. */
const SECRET = {
  DATABASE_URL: 'postgres://inbox@db.internal:5432/inbox',
  INBOX_SECRET_KEY: 'x'.repeat(44),
  NETWORK_API_KEY: 'key',
  WABA_WEBHOOK_SECRET: 'app-secret',
  SMTP_URL: 'smtp://mail.internal:587',
};

const schemas = {
  gateway: GatewayConfigSchema,
  chats: ChatsConfigSchema,
  fanout: FanoutConfigSchema,
  media: MediaConfigSchema,
} as const;

function documents(dir: string): unknown[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml')
    .flatMap((f) => parseAllDocuments(readFileSync(join(dir, f), 'utf8')).map((d) => d.toJSON() as unknown));
}

function shapeKeys(schema: z.ZodType): string[] {
  const def = (schema as { def?: { type?: string; in?: z.ZodType } }).def;
  const obj = def?.type === 'pipe' && def.in ? def.in : schema;
  return obj instanceof z.ZodObject ? Object.keys(obj.shape) : [];
}

describe('deploy/', () => {
  it('has a NATS configuration that nats-server accepts', () => {
    const bin = natsServerBinary();
    if (!bin) throw new Error('nats-server missing');
    const r = spawnSync(bin, ['-c', join(repoRoot, 'deploy/nats/nats-server.conf'), '-t'], {
      env: { ...process.env, POD_NAME: 'nats-0' },
      encoding: 'utf8',
    });
    expect(r.status, r.stderr + r.stdout).toBe(0);
  });

  it('gives every service a configuration it accepts, and no setting that nothing reads', () => {
    const docs = documents(join(repoRoot, 'deploy/k8s/inbox'));
    const config = docs.map((d) => ConfigMap.safeParse(d)).find((r) => r.success)?.data;
    if (!config) throw new Error('no ConfigMap');
    const deployments = docs.flatMap((d) => {
      const r = Deployment.safeParse(d);
      return r.success ? [r.data] : [];
    });
    expect(deployments.map((d) => d.metadata.name).sort()).toEqual(['chats', 'fanout', 'gateway', 'media']);
    for (const d of deployments) {
      const container = d.spec.template.spec.containers[0];
      if (!container) throw new Error('no container');
      // node, its options, then the entry point.
      const [node, ...args] = container.command;
      const entry = args.at(-1) ?? '';
      expect(node).toBe('node');
      expect(
        args.slice(0, -1).every((a) => a.startsWith('--')),
        args.join(' '),
      ).toBe(true);
      expect(existsSync(join(repoRoot, entry)), entry).toBe(true);
      const env = {
        ...config.data,
        ...SECRET,
        ...Object.fromEntries((container.env ?? []).map((e) => [e.name, e.value])),
      };
      const schema = schemas[d.metadata.name as keyof typeof schemas];
      const parsed = schema.safeParse(env);
      expect(parsed.success, `${d.metadata.name}: ${parsed.error?.message}`).toBe(true);
    }
    const read = new Set(Object.values(schemas).flatMap((s) => shapeKeys(s)));
    const unread = [...Object.keys(config.data), ...Object.keys(SECRET)].filter((k) => !read.has(k));
    expect(unread).toEqual([]);
  });
});
