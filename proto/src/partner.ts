import { z } from 'zod';
import { defineCommand, defineConsumer, serviceRpcs } from './contracts.ts';
import {
  headerNameProblem,
  headerValueProblem,
  RESERVED_WEBHOOK_HEADERS,
  WEBHOOK_HEADER_VALUE_MAX_LENGTH,
} from './fanout.ts';
import { type InstanceId, instanceId } from './instance.ts';

/**
 * Partner provisioning speaks on subjects of its own scope, not of any inbox instance: the
 * partner gateway and the provisioner share `sb.partners.…` (request/reply and the durable
 * `sb_partners_commands` stream). Instance ids the provisioner makes always start with `in-`,
 * so no instance can ever be named like this scope.
 */
export const PARTNER_SCOPE: InstanceId = instanceId('partners');

/** Variables a partner may set on an instance (spec 4.5); anything else is refused by name. */
export const ENV_VAR_OVERRIDE_ALLOWLIST = [
  'APP_IS_USER_AVAILABILITY_ENABLED',
  'HIDE_API_LINKS',
  'INBOX_FAVICON_URL',
  'INBOX_FRONTEND_URL',
  'INBOX_SERVICE_NAME',
] as const;

const BOOLEAN_OVERRIDE = /^(true|false|1|0|yes|no|on|off)$/i;

/** Overrides become the instance's environment: a value it would refuse at start is refused now. */
function overrideValueProblem(name: string, value: string): string | undefined {
  if (name === 'APP_IS_USER_AVAILABILITY_ENABLED' || name === 'HIDE_API_LINKS')
    return BOOLEAN_OVERRIDE.test(value.trim())
      ? undefined
      : `${name} must be a Boolean as string, e.g. True or False`;
  if (name === 'INBOX_FAVICON_URL' || name === 'INBOX_FRONTEND_URL')
    return z.url({ protocol: /^https?$/ }).safeParse(value).success
      ? undefined
      : `${name} must be an http(s) URL`;
  if (name === 'INBOX_SERVICE_NAME') return value.trim() ? undefined : `${name} must not be blank`;
  return undefined;
}

export const InstanceStatusSchema = z
  .enum(['provisioning', 'ready', 'failed', 'deleted'])
  .describe(
    '`provisioning` until its health check answers and its events went out; `ready`; `failed`; `deleted`',
  );
export type InstanceStatus = z.infer<typeof InstanceStatusSchema>;

/** One DNS label (RFC 1123), lower-case: what `<subdomain>.<base domain>` needs. */
export const SubdomainSchema = z
  .string()
  .max(63, 'at most 63 characters (one domain label)')
  .regex(
    /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/,
    'must be one DNS label: lower-case letters, digits and dashes, not starting or ending with a dash',
  );

/**
 * The partner events' headers follow the per-user webhooks' rule (`proto/src/fanout.ts`): the
 * events go out long after the 202, so a header the HTTP client would refuse, or one the
 * delivery sets itself, must be refused now; later it could only fail the event, unseen.
 */
const PartnerEventHeadersSchema = z
  .record(z.string(), z.string().max(WEBHOOK_HEADER_VALUE_MAX_LENGTH))
  .superRefine((headers, ctx) => {
    for (const [name, value] of Object.entries(headers)) {
      const problem = headerNameProblem(name) ?? headerValueProblem(value);
      if (problem) ctx.addIssue({ code: 'custom', path: [name], message: `${name}: ${problem}` });
    }
  })
  .describe(
    'Sent with every partner event. Names are RFC 9110 tokens; values visible ASCII with spaces and tabs ' +
      `between; not one of ${RESERVED_WEBHOOK_HEADERS.join(', ')} (any case)`,
  );

export const ConfiguratorSchema = z
  .object({
    user_name: z.string().min(1).max(150),
    webhook_url: z.url({ protocol: /^https?$/ }).max(2000),
    webhook_headers: PartnerEventHeadersSchema.nullish(),
  })
  .meta({
    id: 'ConfiguratorModel',
    example: {
      user_name: 'configurator',
      webhook_url: 'https://partner.example.com/hooks/inbox',
      webhook_headers: { Authorization: 'Bearer partner-side-secret' },
    },
  });

const EmailSchema = z.email().max(254);

/**
 * The Create Instance body (spec 4.5), checked the same way at the partner gateway (422) and by
 * the provisioner: exactly one of `channel_id` and `provider_api_key`, overrides only from the
 * allowlist, at least one seat. A blank subdomain means "generate one".
 */
export const CreateInstanceRequestSchema = z
  .object({
    channel_id: z
      .string()
      .min(1)
      .max(200)
      .nullish()
      .describe('Channel to connect; a new provider key is collected'),
    provider_api_key: z.string().min(1).max(500).nullish().describe('An existing provider API key'),
    subdomain: z
      .union([z.literal(''), SubdomainSchema])
      .nullish()
      .describe('One DNS label (at most 63); blank: the instance id is used'),
    admin_email: EmailSchema.nullish().describe('Admin user name; the activation mail goes there once ready'),
    generate_activation: z.boolean().default(false),
    configurator: ConfiguratorSchema.nullish(),
    max_number_of_seats: z.number().int().min(1).max(100_000).default(5),
    env_var_overrides: z.record(z.string(), z.string().max(2000)).nullish(),
  })
  .superRefine((body, ctx) => {
    const hasChannel = body.channel_id !== undefined && body.channel_id !== null;
    const hasKey = body.provider_api_key !== undefined && body.provider_api_key !== null;
    if (hasChannel === hasKey) {
      ctx.addIssue({
        code: 'custom',
        path: [],
        message: hasChannel
          ? 'give either channel_id or provider_api_key, not both'
          : 'channel_id or provider_api_key is required',
      });
    }
    const adminName = (body.admin_email ?? 'admin').toLowerCase();
    if (body.configurator && body.configurator.user_name.toLowerCase() === adminName) {
      ctx.addIssue({
        code: 'custom',
        path: ['configurator', 'user_name'],
        message: `${body.configurator.user_name} is the admin's user name; the configurator needs its own`,
      });
    }
    const allowed: readonly string[] = ENV_VAR_OVERRIDE_ALLOWLIST;
    for (const [name, value] of Object.entries(body.env_var_overrides ?? {})) {
      const problem = !allowed.includes(name)
        ? `${name} is not an allowed override (allowed: ${ENV_VAR_OVERRIDE_ALLOWLIST.join(', ')})`
        : overrideValueProblem(name, value);
      if (problem) ctx.addIssue({ code: 'custom', path: ['env_var_overrides', name], message: problem });
    }
  })
  .meta({
    id: 'CreateInstanceRequest',
    example: {
      provider_api_key: 'provider-key-of-the-number',
      subdomain: 'acme',
      generate_activation: true,
      configurator: { user_name: 'configurator', webhook_url: 'https://partner.example.com/hooks/inbox' },
      max_number_of_seats: 5,
      env_var_overrides: { INBOX_SERVICE_NAME: 'Acme Inbox' },
    },
  });
export type CreateInstanceRequest = z.output<typeof CreateInstanceRequestSchema>;

export const PartnerInstanceSchema = z
  .object({
    id: z.string(),
    base_domain: z.string().describe('`<subdomain>.<shared inbox domain>`'),
    health_check: z.url().describe('Answers 200 once the instance is ready'),
    channel_id: z.string().nullable().describe('Known once the provider key is resolved'),
    partner_id: z.string(),
    activation_url: z
      .url()
      .optional()
      .describe('With `generate_activation`; works once the instance is ready'),
    status: InstanceStatusSchema,
    created_at: z.number().int().describe('POSIX seconds'),
    deleted_at: z.number().int().nullable().describe('POSIX seconds'),
  })
  .meta({
    id: 'Instance',
    example: {
      id: 'in-3f9a1c2b7d4e',
      base_domain: 'acme.inbox.example.com',
      health_check: 'https://acme.inbox.example.com/api/v1/status/health/',
      channel_id: '104857600123456',
      partner_id: 'pa-7c1e9b20a4d3',
      status: 'provisioning',
      created_at: 1_767_225_600,
      deleted_at: null,
    },
  });
export type PartnerInstance = z.infer<typeof PartnerInstanceSchema>;

export const InstancePageSchema = z
  .object({
    items: z.array(PartnerInstanceSchema),
    total: z.number().int(),
    offset: z.number().int(),
    limit: z.number().int(),
  })
  .meta({ id: 'InstancePage' });

const partnerRpc = serviceRpcs('provisioner', PARTNER_SCOPE);

/** The partner owning an API key, or null: keys are compared by their hash. */
export const authenticatePartner = partnerRpc('partners.authenticate', {
  request: z.object({ api_key: z.string().min(1).max(500) }),
  response: z.object({ partner_id: z.string().nullable() }),
});

/** A partner that exists (sessions name a partner id; a removed partner ends them). */
export const partnerExists = partnerRpc('partners.exists', {
  request: z.object({ partner_id: z.string().min(1).max(100) }),
  response: z.object({ exists: z.boolean() }),
});

/**
 * Records the instance (unique subdomain: a taken one is a `validation_error` on `subdomain`)
 * and its provisioning command in one transaction, then answers: the command is durable.
 */
export const createPartnerInstance = partnerRpc('instances.create', {
  request: z.object({ partner_id: z.string(), body: CreateInstanceRequestSchema }),
  response: PartnerInstanceSchema,
});

export const listPartnerInstances = partnerRpc('instances.list', {
  request: z.object({
    partner_id: z.string(),
    offset: z.number().int().min(0),
    limit: z.number().int().min(1).max(100),
  }),
  response: InstancePageSchema,
});

export const getPartnerInstance = partnerRpc('instances.get', {
  request: z.object({ partner_id: z.string(), instance_id: z.string().max(200) }),
  response: PartnerInstanceSchema,
});

/** Soft delete: the instance is marked deleted at once; its processes are scaled to zero by a command. */
export const deletePartnerInstance = partnerRpc('instances.delete', {
  request: z.object({ partner_id: z.string(), instance_id: z.string().max(200) }),
  response: z.object({ deleted: z.literal(true) }),
});

export const ProvisioningCommandSchema = z.object({
  instance_id: z.string(),
  /** `provision` drives the lifecycle forward; `scale_to_zero` stops a deleted instance. */
  action: z.enum(['provision', 'scale_to_zero']),
});
export type ProvisioningCommand = z.infer<typeof ProvisioningCommandSchema>;

export const provisioningCommand = defineCommand('provisioning', ProvisioningCommandSchema, PARTNER_SCOPE);

export const provisioningConsumer = defineConsumer({
  durable: 'provisioner-lifecycle',
  message: provisioningCommand,
  // A step may wait for a health check; the bus signals progress while it runs.
  ackWaitSeconds: 30,
  maxAckPending: 256,
  concurrency: 16,
});

/** The partner's asynchronous events (spec 6.2). */
export const TokenEventSchema = z.object({ token: z.string() });
export const ErrorsEventSchema = z.object({
  errors: z.array(
    z.object({
      code: z.number().int(),
      title: z.string(),
      details: z.string(),
      parameters: z.record(z.string(), z.string()).optional(),
    }),
  ),
});
export type ErrorsEvent = z.infer<typeof ErrorsEventSchema>;
