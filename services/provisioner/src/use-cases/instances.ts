import { enqueueOutbox, isUniqueViolation } from '@switchboard/kit';
import {
  type CreateInstanceRequest,
  type PartnerInstance,
  type ProvisioningCommand,
  provisioningCommand,
  ServiceError,
} from '@switchboard/proto';
import { hashSecret, newId, newSecret } from '../domain/credentials.ts';
import { insertActivationToken } from '../store/activations.ts';
import type { InstanceSecrets, InstanceSettings } from '../store/db.ts';
import {
  type InstanceRow,
  partnerInstance,
  partnerInstancesPage,
  softDeleteInstance,
} from '../store/instances.ts';
import { OUTBOX_TABLE, type PublicUrls, type UseCaseDeps } from './deps.ts';

const seconds = (d: Date) => Math.floor(d.getTime() / 1000);

export function instanceView(row: InstanceRow, urls: PublicUrls, activationToken?: string): PartnerInstance {
  return {
    id: row.id,
    base_domain: urls.baseDomain(row.subdomain),
    health_check: urls.healthCheck(row.subdomain),
    channel_id: row.channel_id,
    partner_id: row.partner_id,
    ...(activationToken && { activation_url: urls.activation(row.subdomain, activationToken) }),
    status: row.status,
    created_at: seconds(row.created_at),
    deleted_at: row.deleted_at ? seconds(row.deleted_at) : null,
  };
}

function command(c: ProvisioningCommand, key: string) {
  return { contract: provisioningCommand.name, payload: c, key };
}

export function subdomainTaken(subdomain: string): ServiceError {
  const msg = `Subdomain already in use: ${subdomain}`;
  return new ServiceError('validation_error', msg, { fields: { subdomain: [msg] } });
}

/**
 * Records the instance, its activation token and its provisioning command in one transaction:
 * once this answers, the creation is durable and the lifecycle runs from the command.
 */
export async function createInstance(
  deps: UseCaseDeps,
  partnerId: string,
  body: CreateInstanceRequest,
): Promise<PartnerInstance> {
  const id = newId('in');
  const subdomain = body.subdomain || id;
  const settings: InstanceSettings = {
    admin_email: body.admin_email ?? null,
    generate_activation: body.generate_activation,
    configurator_user_name: body.configurator?.user_name ?? null,
    configurator_webhook_url: body.configurator?.webhook_url ?? null,
    max_number_of_seats: body.max_number_of_seats,
    env_var_overrides: body.env_var_overrides ?? {},
    channel_requested: Boolean(body.channel_id),
  };
  const secrets: InstanceSecrets = {
    inbox_secret_key: newSecret(''),
    admin_password: newSecret('Aa1-'),
    provider_api_key: body.provider_api_key ?? null,
    configurator_webhook_headers: body.configurator?.webhook_headers ?? {},
  };
  const activationToken = body.generate_activation ? newSecret('act_') : undefined;
  let row: InstanceRow;
  try {
    row = await deps.db.transaction().execute(async (trx) => {
      const inserted = await trx
        .insertInto('instances')
        .values({
          id,
          partner_id: partnerId,
          subdomain,
          status: 'provisioning',
          channel_id: body.channel_id ?? null,
          phone_number_id: null,
          display_phone_number: null,
          settings: JSON.stringify(settings),
          secrets_sealed: deps.box.seal(JSON.stringify(secrets)),
          provider_key_sealed: null,
          database_name: `${deps.config.INSTANCE_DATABASE_PREFIX}${id.replace(/-/g, '_')}`,
          port: null,
          pid: null,
          allocated_at: null,
          healthy_at: null,
          token_sent_at: null,
          mail_sent_at: null,
          failure: null,
          errors_sent_at: null,
          ready_at: null,
          deleted_at: null,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      if (activationToken) await insertActivationToken(trx, hashSecret(activationToken), id);
      await enqueueOutbox(trx, OUTBOX_TABLE, [
        command({ instance_id: id, action: 'provision' }, `provision:${id}`),
      ]);
      return inserted;
    });
  } catch (err) {
    if (isUniqueViolation(err, 'instances_subdomain_key')) throw subdomainTaken(subdomain);
    throw err;
  }
  await deps.outbox.publishSoon(2_000);
  return instanceView(row, deps.urls, activationToken);
}

export async function listInstances(
  deps: UseCaseDeps,
  r: { partner_id: string; offset: number; limit: number },
) {
  const { rows, total } = await partnerInstancesPage(deps.db, r.partner_id, r.offset, r.limit);
  return { items: rows.map((row) => instanceView(row, deps.urls)), total, offset: r.offset, limit: r.limit };
}

async function ownInstance(deps: UseCaseDeps, partnerId: string, id: string): Promise<InstanceRow> {
  const row = await partnerInstance(deps.db, partnerId, id);
  // Another partner's instance is answered exactly like a missing one.
  if (!row) throw new ServiceError('not_found', 'Instance not found.');
  return row;
}

export async function getInstance(deps: UseCaseDeps, r: { partner_id: string; instance_id: string }) {
  return instanceView(await ownInstance(deps, r.partner_id, r.instance_id), deps.urls);
}

/**
 * Soft delete: marked deleted with a timestamp at once (its subdomain and number are free
 * again), its processes stopped by a durable command; its database and streams stay.
 */
export async function deleteInstance(
  deps: UseCaseDeps,
  r: { partner_id: string; instance_id: string },
): Promise<{ deleted: true }> {
  const id = r.instance_id;
  const deleted = await deps.db.transaction().execute(async (trx) => {
    if (!(await softDeleteInstance(trx, r.partner_id, id, new Date()))) return false;
    await enqueueOutbox(trx, OUTBOX_TABLE, [
      command({ instance_id: id, action: 'scale_to_zero' }, `scale_to_zero:${id}`),
    ]);
    return true;
  });
  if (!deleted) {
    // Nothing changed: deleted before (answered alike: the delete is idempotent) or not the partner's.
    await ownInstance(deps, r.partner_id, id);
    return { deleted: true };
  }
  await deps.outbox.publishSoon(2_000);
  return { deleted: true };
}
