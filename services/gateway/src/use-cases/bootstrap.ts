import { randomBytes } from 'node:crypto';
import type { Logger } from '@switchboard/kit';
import { ServiceError } from '@switchboard/proto';
import type { Kysely } from 'kysely';
import type { GatewayDatabase } from '../store/db.ts';
import { adminExists, insertConfiguratorIfMissing, userByUsername } from '../store/users.ts';
import type { Tokens } from './tokens.ts';
import type { Users } from './users.ts';

export interface BootstrapConfig {
  adminUsername: string | undefined;
  adminEmail: string | undefined;
  adminPassword: string | undefined;
}

/**
 * First start of an instance: when no admin exists yet, create one from configuration (the
 * e-mail doubles as username, as the partner API's `admin_email` promises). A generated
 * password is logged once; `npm start` passes its own and prints it.
 */
export async function ensureAdmin(
  db: Kysely<GatewayDatabase>,
  users: Users,
  cfg: BootstrapConfig,
  log: Logger,
): Promise<void> {
  if (await adminExists(db)) return;
  const username = cfg.adminUsername ?? cfg.adminEmail ?? 'admin';
  const generated = cfg.adminPassword === undefined;
  const password = cfg.adminPassword ?? randomBytes(12).toString('base64url');
  try {
    await users.create(null, {
      username,
      password,
      ...(cfg.adminEmail !== undefined && { email: cfg.adminEmail }),
      profile: { role: 'admin' },
    });
  } catch (err) {
    // Two gateways starting at once: the other one created it.
    if (err instanceof ServiceError && err.code === 'validation_error' && err.fields?.username) return;
    if (err instanceof ServiceError && err.fields?.password) {
      throw new Error(`INBOX_ADMIN_PASSWORD is not accepted: ${err.fields.password.join(' ')}`);
    }
    throw err;
  }
  // Logged once on purpose: the operator has no other way to learn it. `password` keys are
  // redacted everywhere, so it goes under its own name.
  if (generated)
    log.warn(
      { username, generated_password: password },
      'created the first admin user; change this password',
    );
  else log.info({ username }, 'created the first admin user');
}

/** Creates the configurator service account when missing and returns its (reused) Auth Token. */
export async function ensureConfigurator(
  db: Kysely<GatewayDatabase>,
  tokens: Tokens,
  username: string,
): Promise<{ user_id: number; username: string; token: string }> {
  await insertConfiguratorIfMissing(db, username);
  const user = await userByUsername(db, username);
  if (user.role !== 'configurator') {
    throw new ServiceError(
      'username_taken',
      `"${username}" already belongs to a user who is not the configurator.`,
    );
  }
  return { user_id: user.id, username: user.username, token: await tokens.authTokenFor(user.id) };
}
