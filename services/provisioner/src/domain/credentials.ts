import { createHash, randomBytes } from 'node:crypto';

/**
 * Partner API keys and activation tokens are random (256 bits), shown once and kept only as
 * SHA-256: with that much entropy a fast hash is enough, and lookups stay indexed.
 */
export function newSecret(prefix: string): string {
  return `${prefix}${randomBytes(32).toString('base64url')}`;
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** Ids are `<prefix>-` and 12 hex digits; instance ids double as NATS names, so `in-` keeps them off the partner scope. */
export function newId(prefix: 'pa' | 'in'): string {
  return `${prefix}-${randomBytes(6).toString('hex')}`;
}
