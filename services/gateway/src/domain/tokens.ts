import type { Role } from '@switchboard/proto';
import { ServiceError } from '@switchboard/proto';

export type RefreshPurpose = 'refresh' | 'passwordless';

/** A stored refresh token (or password-less link) and its user, as the conversion sees them. */
export interface RefreshTokenState {
  purpose: RefreshPurpose;
  expires_at: Date;
  used_at: Date | null;
  role: Role;
  is_active: boolean;
}

/** What converting does with the refresh token: mark it used, and issue a replacement. */
export interface RefreshDecision {
  consume: boolean;
  rotate: boolean;
}

/**
 * A refresh token (or password-less link) converts only when known, unused, unexpired and of an
 * active user; the configurator never signs in with one.
 */
export function assertRefreshUsable(
  row: RefreshTokenState | undefined,
  now: number,
): asserts row is RefreshTokenState {
  if (!row || row.used_at !== null || row.expires_at.getTime() <= now || !row.is_active)
    throw new ServiceError('invalid_refresh_token', 'The refresh token is invalid, used or expired.');
  if (row.role === 'configurator') {
    throw new ServiceError(
      'configurator_not_allowed',
      'The configurator user cannot sign in with a refresh token.',
    );
  }
}

/**
 * Spec rule 1: converting resets the refresh token unless `keep` is true, and the replacement is
 * returned beside the auth token. A password-less link works once whatever `keep` says, and is
 * replaced by nothing.
 */
export function refreshDecision(purpose: RefreshPurpose, keep: boolean): RefreshDecision {
  const consume = !keep || purpose === 'passwordless';
  return { consume, rotate: consume && purpose === 'refresh' };
}

/** How long a token of this purpose lives, in seconds. */
export function refreshTtlSeconds(
  purpose: RefreshPurpose,
  ttl: { refreshTtlSeconds: number; passwordlessTtlSeconds: number },
): number {
  return purpose === 'refresh' ? ttl.refreshTtlSeconds : ttl.passwordlessTtlSeconds;
}
