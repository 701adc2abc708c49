import { PasswordRefusedError, setAdminPassword } from '../adapters/instance-api.ts';
import { hashSecret } from '../domain/credentials.ts';
import { activationToken, releaseActivationToken, useActivationToken } from '../store/activations.ts';
import { openInstanceSecrets } from '../store/db.ts';
import { instanceById, updateInstance } from '../store/instances.ts';
import type { UseCaseDeps } from './deps.ts';

export type ActivationState =
  | { kind: 'usable'; adminUsername: string }
  | { kind: 'not_ready' }
  | { kind: 'invalid' };

/**
 * One activation token of the instance at `subdomain`: usable once the instance is ready, once.
 * A token of another instance is as invalid as an unknown one.
 */
export async function activationState(
  deps: UseCaseDeps,
  subdomain: string,
  token: string,
): Promise<ActivationState> {
  const found = await activationToken(deps.db, hashSecret(token));
  if (!found || found.used_at) return { kind: 'invalid' };
  const row = await instanceById(deps.db, found.instance_id);
  if (!row || row.subdomain !== subdomain || row.status === 'deleted' || row.status === 'failed')
    return { kind: 'invalid' };
  if (row.status !== 'ready' || row.port === null) return { kind: 'not_ready' };
  // Activated before (with another of its tokens): the provisioner no longer holds a password to replace.
  const secrets = openInstanceSecrets(deps.box, row.secrets_sealed);
  if (secrets.admin_password === '') return { kind: 'invalid' };
  return { kind: 'usable', adminUsername: row.settings.admin_email ?? 'admin' };
}

export type ActivationResult =
  | { kind: 'done'; adminUsername: string }
  | { kind: 'refused'; reason: string }
  | ActivationState;

/** Sets the admin's password on the instance and spends the token (given back if the instance refuses). */
export async function activate(
  deps: UseCaseDeps,
  subdomain: string,
  token: string,
  password: string,
): Promise<ActivationResult> {
  const state = await activationState(deps, subdomain, token);
  if (state.kind !== 'usable') return state;
  const hash = hashSecret(token);
  if (!(await useActivationToken(deps.db, hash))) return { kind: 'invalid' };
  const found = await activationToken(deps.db, hash);
  const row = found ? await instanceById(deps.db, found.instance_id) : undefined;
  if (!row || row.port === null) return { kind: 'invalid' };
  const secrets = openInstanceSecrets(deps.box, row.secrets_sealed);
  try {
    await setAdminPassword(row.port, {
      username: state.adminUsername,
      currentPassword: secrets.admin_password,
      newPassword: password,
    });
  } catch (err) {
    await releaseActivationToken(deps.db, hash);
    if (err instanceof PasswordRefusedError) return { kind: 'refused', reason: err.message };
    throw err;
  }
  // The provisioner no longer knows the admin's password: the generated one is dropped.
  await updateInstance(deps.db, row.id, {
    secrets_sealed: deps.box.seal(JSON.stringify({ ...secrets, admin_password: '' })),
  });
  return { kind: 'done', adminUsername: state.adminUsername };
}
