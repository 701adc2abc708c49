import { isUniqueViolation } from '@switchboard/kit';
import {
  ensureConfigurator as ensureConfiguratorRpc,
  instanceId,
  NetworkError,
  ServiceError,
} from '@switchboard/proto';
import { createBus, type Disposition } from '@switchboard/proto/bus';
import { type Kysely, sql } from 'kysely';
import { instanceHealthy } from '../adapters/instance-api.ts';
import { hashSecret, newSecret } from '../domain/credentials.ts';
import { type CreationFailure, errorsEvent } from '../domain/errors-events.ts';
import { instanceEnvironment } from '../domain/instance-env.ts';
import { nextStep, type Progress, type Step, transition } from '../domain/lifecycle.ts';
import { deleteActivationToken, insertActivationToken } from '../store/activations.ts';
import { type InstanceSecrets, openInstanceSecrets, type ProvisionerDatabase } from '../store/db.ts';
import {
  type InstanceRow,
  instanceById,
  liveInstanceForNumber,
  moveStatus,
  updateInstance,
} from '../store/instances.ts';
import { partnerSigningSecret } from '../store/partners.ts';
import type { UseCaseDeps } from './deps.ts';

/** What a step leaves: go on with the next one, or hand the command back for later. */
type StepResult = 'next' | Disposition;

const HEALTH_POLL_MS = 150;
/** How long one delivery of the command waits for a health check before handing it back. */
const HEALTH_WAIT_PER_DELIVERY_MS = 10_000;

function secretsOf(deps: UseCaseDeps, row: InstanceRow): InstanceSecrets {
  return openInstanceSecrets(deps.box, row.secrets_sealed);
}

async function progressOf(deps: UseCaseDeps, row: InstanceRow): Promise<Progress> {
  const schedule = deps.config.PARTNER_EVENTS_RETRY_SCHEDULE.length;
  const wantsEvents = row.settings.configurator_webhook_url !== null;
  const running =
    row.status === 'deleted' ? row.pid !== null : (await deps.runtime.status(row.id)).state === 'running';
  return {
    status: row.status,
    keyResolved: row.provider_key_sealed !== null,
    numberClaimed: row.phone_number_id !== null,
    allocated: row.allocated_at !== null,
    running,
    healthy: row.healthy_at !== null,
    wantsToken: wantsEvents,
    tokenSent: row.token_sent_at !== null || row.token_attempts >= schedule,
    wantsMail: row.settings.admin_email !== null,
    mailSent: row.mail_sent_at !== null || row.mail_attempts >= schedule,
    errorsOwed:
      wantsEvents && row.failure !== null && row.errors_sent_at === null && row.errors_attempts < schedule,
  };
}

/**
 * Drives one instance as far as it can go now: derives the next step from what is recorded,
 * runs it, records its result, and repeats. Every step is idempotent, so a redelivered command
 * or a second provisioner finds finished work finished. Answers how the command is settled.
 */
export async function driveLifecycle(deps: UseCaseDeps, id: string): Promise<Disposition | undefined> {
  for (let guard = 0; guard < 20; guard++) {
    const row = await instanceById(deps.db, id);
    if (!row) return { kind: 'term', reason: `no instance ${id}` };
    const step = nextStep(await progressOf(deps, row));
    if (!step) return undefined;
    const result = await runStep(deps, row, step);
    if (result !== 'next') return result;
  }
  return { kind: 'nak', delayMs: 1_000 };
}

async function runStep(deps: UseCaseDeps, row: InstanceRow, step: Step): Promise<StepResult> {
  deps.log.debug({ instance: row.id, step }, 'lifecycle step');
  switch (step) {
    case 'resolve_key':
    case 'claim_number':
      return resolveAndClaim(deps, row);
    case 'allocate':
      return allocate(deps, row);
    case 'start':
      return start(deps, row);
    case 'await_health':
      return awaitHealth(deps, row);
    case 'send_token':
      return sendToken(deps, row);
    case 'send_activation_mail':
      return sendActivationMail(deps, row);
    case 'send_errors':
      return sendErrors(deps, row);
    case 'scale_to_zero':
      await deps.runtime.scaleToZero(row.id, row.pid);
      await updateInstance(deps.db, row.id, { pid: null });
      deps.log.info({ instance: row.id }, 'instance scaled to zero');
      return 'next';
  }
}

async function fail(deps: UseCaseDeps, row: InstanceRow, failure: CreationFailure): Promise<StepResult> {
  deps.log.warn({ instance: row.id, failure }, 'instance creation failed');
  await moveStatus(deps.db, row.id, row.status, transition(row.status, { type: 'failed' }), {
    failure: JSON.stringify({
      code: failure.code,
      details: failure.details ?? '',
      ...(failure.parameters && { parameters: failure.parameters }),
    }),
  });
  if (row.pid !== null || (await deps.runtime.status(row.id)).state === 'running') {
    await deps.runtime.scaleToZero(row.id, row.pid);
    await updateInstance(deps.db, row.id, { pid: null });
  }
  return 'next';
}

/** A provider answer that will not change by asking again. */
function refused(err: unknown): err is NetworkError {
  return (
    err instanceof NetworkError &&
    err.status !== undefined &&
    err.status >= 400 &&
    err.status < 500 &&
    err.status !== 429
  );
}

/**
 * The provider key (collected from the partner hub for a channel, which revokes the channel's
 * previous key), its business number, and the claim on that number: one live instance per
 * number, decided by the database's unique index (errors event 701 otherwise).
 */
async function resolveAndClaim(deps: UseCaseDeps, row: InstanceRow): Promise<StepResult> {
  if (!row.settings.channel_requested) return resolveAndClaimIn(deps, deps.db, row);
  // One request per channel at a time, from the check to the claim: two that checked before
  // either claimed would both ask the hub for a key, the second revoking the first's.
  const lock = `channel:${row.channel_id ?? ''}`;
  return deps.db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(hashtext(${lock}))`.execute(trx);
    return resolveAndClaimIn(deps, trx, row);
  });
}

async function resolveAndClaimIn(
  deps: UseCaseDeps,
  db: Kysely<ProvisionerDatabase>,
  row: InstanceRow,
): Promise<StepResult> {
  const secrets = secretsOf(deps, row);
  let key = secrets.provider_api_key;
  if (row.settings.channel_requested) {
    const channel = row.channel_id ?? '';
    // Asking the hub for a new key revokes the channel's current one: never for a channel a live
    // instance uses (it would stop sending), which is 701 anyway.
    if (await liveInstanceForNumber(db, { channel_id: channel }, row.id))
      return fail(deps, row, { code: 701, parameters: { channel_id: channel } });
    try {
      key = (await deps.hub.createChannelApiKey(channel)).api_key;
    } catch (err) {
      if (refused(err) && (err.status === 401 || err.status === 403)) {
        // The hub refuses the provisioner's own key: the operator's error, not the channel's.
        deps.log.error({ instance: row.id, status: err.status }, 'partner hub refuses PARTNER_HUB_API_KEY');
        return fail(deps, row, {
          code: 704,
          details: 'The provisioner could not ask the partner hub for a key: its own hub key was refused.',
        });
      }
      if (refused(err)) return fail(deps, row, { code: 703, parameters: { channel_id: channel } });
      throw err;
    }
  }
  if (!key) return fail(deps, row, { code: 702 });
  let owner: Awaited<ReturnType<UseCaseDeps['hub']['keyOwner']>>;
  try {
    owner = await deps.hub.keyOwner(key);
  } catch (err) {
    if (refused(err)) return fail(deps, row, { code: 702 });
    throw err;
  }
  const channelId = row.channel_id ?? owner.phoneNumberId;
  const taken = await liveInstanceForNumber(db, { phone_number_id: owner.phoneNumberId }, row.id);
  if (taken) return fail(deps, row, { code: 701, parameters: { channel_id: channelId } });
  try {
    await updateInstance(db, row.id, {
      provider_key_sealed: deps.box.seal(key),
      channel_id: channelId,
      phone_number_id: owner.phoneNumberId,
      display_phone_number: owner.displayPhoneNumber ?? null,
    });
  } catch (err) {
    if (isUniqueViolation(err, 'instances_number_key'))
      return fail(deps, row, { code: 701, parameters: { channel_id: channelId } });
    throw err;
  }
  return 'next';
}

/**
 * A port free now and held by no other live instance (a stopped one keeps its own), recorded for
 * this one; the unique index settles two instances given the same port at once.
 */
async function reservePort(deps: UseCaseDeps, row: InstanceRow, also: Partial<{ allocated_at: Date }> = {}) {
  for (let tries = 1; ; tries++) {
    const port = await deps.freePort();
    try {
      await updateInstance(deps.db, row.id, { ...also, port });
      return port;
    } catch (err) {
      if (!isUniqueViolation(err, 'instances_port_key') || tries >= 20) throw err;
    }
  }
}

async function allocate(deps: UseCaseDeps, row: InstanceRow): Promise<StepResult> {
  await deps.runtime.create({ id: row.id, databaseName: row.database_name });
  if (row.port === null) await reservePort(deps, row, { allocated_at: new Date() });
  else await updateInstance(deps.db, row.id, { allocated_at: new Date() });
  return 'next';
}

function databaseUrl(adminUrl: string, name: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

async function start(deps: UseCaseDeps, row: InstanceRow): Promise<StepResult> {
  const { config } = deps;
  const secrets = secretsOf(deps, row);
  const port = row.port ?? (await reservePort(deps, row));
  const env = instanceEnvironment({
    instanceId: row.id,
    port,
    databaseUrl: databaseUrl(config.INSTANCE_DATABASE_ADMIN_URL ?? config.DATABASE_URL, row.database_name),
    natsUrl: config.NATS_URL,
    natsStreamReplicas: config.NATS_STREAM_REPLICAS,
    networkBaseUrl: config.NETWORK_BASE_URL,
    providerApiKey: row.provider_key_sealed ? deps.box.open(row.provider_key_sealed) : '',
    displayPhoneNumber: row.display_phone_number,
    secretKey: secrets.inbox_secret_key,
    adminUsername: row.settings.admin_email ?? 'admin',
    adminEmail: row.settings.admin_email,
    adminPassword: secrets.admin_password,
    seats: row.settings.max_number_of_seats,
    publicUrl: `http://127.0.0.1:${port}`,
    overrides: row.settings.env_var_overrides,
    extra: config.INSTANCE_EXTRA_ENV,
  });
  const status = await deps.runtime.start({
    id: row.id,
    databaseName: row.database_name,
    env,
    port,
    knownPid: row.pid,
  });
  // A process started afresh (not the one recorded, re-adopted) has not answered its health
  // check yet, whatever the one before it did.
  await updateInstance(deps.db, row.id, {
    pid: status.pid,
    ...(status.pid !== row.pid && { healthy_at: null }),
  });
  return 'next';
}

async function awaitHealth(deps: UseCaseDeps, row: InstanceRow): Promise<StepResult> {
  const port = row.port;
  if (port === null) return { kind: 'nak', delayMs: 500 };
  const until = Date.now() + HEALTH_WAIT_PER_DELIVERY_MS;
  while (Date.now() < until) {
    if (await instanceHealthy(port)) {
      const now = new Date();
      await updateInstance(deps.db, row.id, { healthy_at: now });
      if (row.status === 'provisioning') {
        await moveStatus(deps.db, row.id, row.status, transition(row.status, { type: 'healthy' }), {
          ready_at: now,
        });
        deps.log.info(
          { instance: row.id, seconds: (now.getTime() - row.created_at.getTime()) / 1000 },
          'instance ready',
        );
      }
      return 'next';
    }
    await new Promise((r) => setTimeout(r, HEALTH_POLL_MS));
  }
  // From the allocation, not the request: a provider slow to hand out the key must not use up
  // the time the instance has to start.
  const ageSeconds = (Date.now() - (row.allocated_at ?? row.created_at).getTime()) / 1000;
  if (row.status === 'provisioning' && ageSeconds > deps.config.INSTANCE_HEALTH_TIMEOUT_SECONDS) {
    return fail(deps, row, {
      code: 704,
      details: `The instance did not answer its health check within ${deps.config.INSTANCE_HEALTH_TIMEOUT_SECONDS} s.`,
    });
  }
  return { kind: 'nak', delayMs: 1_000 };
}

/** `delivered`, `retry` (a later attempt may pass) or `refused` (a target the SSRF guard refuses stays refused). */
async function deliverEvent(
  deps: UseCaseDeps,
  row: InstanceRow,
  kind: 'token' | 'errors',
  body: unknown,
): Promise<'delivered' | 'retry' | 'refused'> {
  const url = row.settings.configurator_webhook_url;
  if (!url) return 'delivered';
  const secrets = secretsOf(deps, row);
  const secret = deps.box.open(await partnerSigningSecret(deps.db, row.partner_id));
  const outcome = await deps.events.deliver({
    url,
    headers: secrets.configurator_webhook_headers,
    body,
    secret,
    messageId: `msg_${kind}_${row.id}`,
  });
  if (outcome.ok) return 'delivered';
  deps.log.warn({ instance: row.id, event: kind, reason: outcome.reason }, 'partner event not delivered');
  return outcome.retryable ? 'retry' : 'refused';
}

/** The next attempt's delay, or undefined once the schedule is spent. */
function retryDelay(deps: UseCaseDeps, attempts: number): number | undefined {
  return deps.config.PARTNER_EVENTS_RETRY_SCHEDULE[attempts];
}

/**
 * Sends a partner event and records what came of it: sent, or one attempt more (all of them at
 * once when the target is refused for good), tried again on the schedule until it is spent.
 */
async function sendEvent(
  deps: UseCaseDeps,
  row: InstanceRow,
  kind: 'token' | 'errors',
  body: unknown,
): Promise<StepResult> {
  const outcome = await deliverEvent(deps, row, kind, body);
  if (outcome === 'delivered') {
    const sentAt = new Date();
    await updateInstance(
      deps.db,
      row.id,
      kind === 'token' ? { token_sent_at: sentAt } : { errors_sent_at: sentAt },
    );
    return 'next';
  }
  const before = kind === 'token' ? row.token_attempts : row.errors_attempts;
  const attempts = outcome === 'refused' ? deps.config.PARTNER_EVENTS_RETRY_SCHEDULE.length : before + 1;
  await updateInstance(
    deps.db,
    row.id,
    kind === 'token' ? { token_attempts: attempts } : { errors_attempts: attempts },
  );
  const delay = retryDelay(deps, attempts);
  return delay === undefined ? 'next' : { kind: 'nak', delayMs: delay };
}

async function sendToken(deps: UseCaseDeps, row: InstanceRow): Promise<StepResult> {
  const username = row.settings.configurator_user_name ?? 'configurator';
  let token: string;
  try {
    const bus = await createBus(deps.nc, instanceId(row.id));
    token = (await bus.request(ensureConfiguratorRpc, { username }, { timeoutMs: 10_000 })).token;
  } catch (err) {
    if (err instanceof ServiceError && err.code !== 'service_unavailable') {
      // The instance refuses this configurator (its name belongs to another user): no token to send.
      deps.log.error({ instance: row.id, err }, 'configurator not created; no token event');
      await updateInstance(deps.db, row.id, {
        token_attempts: deps.config.PARTNER_EVENTS_RETRY_SCHEDULE.length,
      });
      return 'next';
    }
    return { kind: 'nak', delayMs: 1_000 };
  }
  return sendEvent(deps, row, 'token', { token });
}

async function sendErrors(deps: UseCaseDeps, row: InstanceRow): Promise<StepResult> {
  const failure = row.failure;
  if (!failure) return 'next';
  const body = errorsEvent({
    code: failure.code as CreationFailure['code'],
    ...(failure.details && { details: failure.details }),
    ...(failure.parameters && { parameters: failure.parameters }),
  });
  return sendEvent(deps, row, 'errors', body);
}

/** The activation mail carries a token of its own (the one in the create response is shown only there). */
async function sendActivationMail(deps: UseCaseDeps, row: InstanceRow): Promise<StepResult> {
  const to = row.settings.admin_email;
  if (!to) return 'next';
  const token = newSecret('act_');
  const tokenHash = hashSecret(token);
  await insertActivationToken(deps.db, tokenHash, row.id);
  const link = deps.urls.activation(row.subdomain, token);
  try {
    await deps.mailer.send({
      to,
      subject: 'Activate your inbox',
      text: [
        'Your inbox is ready.',
        '',
        `Open this link to sign in as its admin (${to}) and set your password:`,
        link,
        '',
        'The link works once.',
      ].join('\n'),
    });
  } catch (err) {
    // The link of a mail that never left must not stay valid; the next try has its own.
    await deleteActivationToken(deps.db, tokenHash);
    const attempts = row.mail_attempts + 1;
    await updateInstance(deps.db, row.id, { mail_attempts: attempts });
    const delay = retryDelay(deps, attempts);
    if (delay === undefined) {
      deps.log.error({ instance: row.id, to, err, attempts }, 'activation mail given up');
      return 'next';
    }
    deps.log.warn({ instance: row.id, err, attempts, delayMs: delay }, 'activation mail not sent; retrying');
    return { kind: 'nak', delayMs: delay };
  }
  await updateInstance(deps.db, row.id, { mail_sent_at: new Date() });
  return 'next';
}
