import { resolve } from 'node:path';
import {
  BaseEnvSchema,
  configLoader,
  envBoolean,
  envPort,
  InstanceSecretKeySchema,
  parseDurationList,
} from '@switchboard/kit';
import { PARTNER_SCOPE } from '@switchboard/proto';
import { PROVIDER_BASE_URL, PROVIDER_HUB_BASE_URL } from '@switchboard/proto/network';
import { z } from 'zod';

const JsonStringRecord = z
  .string()
  .default('{}')
  .transform((v, ctx) => {
    const parsed = z.record(z.string(), z.string()).safeParse(
      (() => {
        try {
          return JSON.parse(v) as unknown;
        } catch {
          return undefined;
        }
      })(),
    );
    if (!parsed.success) {
      ctx.addIssue({ code: 'custom', message: 'expected a JSON object of strings' });
      return z.NEVER;
    }
    return parsed.data;
  });

export const ProvisionerConfigSchema = BaseEnvSchema.omit({ INSTANCE_ID: true })
  .extend({
    /** Seals what the provisioner must read again (provider keys, instance secrets, partners' signing secrets). */
    PROVISIONER_SECRET_KEY: InstanceSecretKeySchema,
    /** A PostgreSQL role allowed to create databases; instances get theirs on this server. Defaults to DATABASE_URL. */
    INSTANCE_DATABASE_ADMIN_URL: z.url({ protocol: /^postgres(ql)?$/ }).optional(),
    INSTANCE_DATABASE_PREFIX: z
      .string()
      .regex(/^[a-z_][a-z0-9_]{0,30}$/)
      .default('sb_instance_'),
    /** Instances answer at `<subdomain>.<PARTNER_BASE_DOMAIN>`. */
    PARTNER_BASE_DOMAIN: z
      .string()
      .regex(/^[a-z0-9.-]+$/)
      .default('localhost'),
    /** The host-routing edge in front of the local instances. */
    EDGE_HOST: z.string().default('127.0.0.1'),
    EDGE_PORT: envPort.default(8088),
    /** Scheme and port in the public URLs (`health_check`, `activation_url`); the port defaults to EDGE_PORT. */
    EDGE_PUBLIC_SCHEME: z.enum(['http', 'https']).default('http'),
    EDGE_PUBLIC_PORT: envPort.optional(),
    /** The provider's messaging API (the sandbox in development): instances send through it. */
    NETWORK_BASE_URL: z.url().default(PROVIDER_BASE_URL),
    PARTNER_HUB_URL: z.url().default(PROVIDER_HUB_BASE_URL),
    PARTNER_HUB_PARTNER_ID: z.string().min(1).default('switchboard'),
    PARTNER_HUB_API_KEY: z.string().min(1).optional(),
    /** The single-process inbox every local instance runs. */
    INSTANCE_ENTRY: z
      .string()
      .default('services/inbox/src/main.ts')
      .transform((p) => resolve(p)),
    INSTANCE_NODE: z.string().default(process.execPath),
    /** Extra environment for every instance (JSON object of strings), e.g. the fan-out's test settings. */
    INSTANCE_EXTRA_ENV: JsonStringRecord,
    INSTANCE_LOG_DIR: z.string().optional(),
    /** Stop the instances when the provisioner stops (npm start); otherwise they keep serving and are adopted again. */
    RUNTIME_STOP_ON_EXIT: envBoolean.default(false),
    /** Seconds an instance may take to answer its health check before creation fails (errors event 704). */
    INSTANCE_HEALTH_TIMEOUT_SECONDS: z.coerce.number().int().positive().default(300),
    /** Configurator webhooks on private or loopback addresses (local development and tests only). */
    PARTNER_EVENTS_ALLOW_PRIVATE_TARGETS: envBoolean.default(false),
    PARTNER_EVENTS_RETRY_SCHEDULE: z
      .string()
      .default('0s,5s,5m,30m,2h,5h,10h,10h')
      .transform((v, ctx) => {
        const list = parseDurationList(v);
        if (!list?.length) {
          ctx.addIssue({ code: 'custom', message: 'expected comma-separated durations, e.g. 0s,5s,5m' });
          return z.NEVER;
        }
        return list;
      }),
    SMTP_URL: z
      .string()
      .regex(/^smtps?:\/\//, 'smtp:// or smtps:// URL')
      .optional(),
    MAIL_FROM: z.string().min(3).default('Switchboard <no-reply@switchboard.local>'),
  })
  // The provisioner's own bus is the partner scope; instances' buses are made per instance.
  .transform((c) => ({ ...c, INSTANCE_ID: PARTNER_SCOPE }));

export type ProvisionerConfig = z.output<typeof ProvisionerConfigSchema>;

export const loadConfig = configLoader(ProvisionerConfigSchema);
