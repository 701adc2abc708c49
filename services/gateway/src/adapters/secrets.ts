import { createHash, randomBytes } from 'node:crypto';
import { createSecretBox, type SecretBox } from '@switchboard/kit';

/** A 40-character hex token, the shape clients of DRF-style inboxes expect (160 bits of entropy). */
export function newAuthToken(): string {
  return randomBytes(20).toString('hex');
}

/** Refresh tokens travel in links: URL-safe, 256 bits. */
export function newRefreshToken(): string {
  return randomBytes(32).toString('base64url');
}

/** Tokens are random and long, so a plain SHA-256 is a sound lookup key (no salt or KDF needed). */
export function tokenHash(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/**
 * Auth tokens sealed with kit's SecretBox (AES-256-GCM, key derived from INBOX_SECRET_KEY).
 * Used only for auth tokens, which the spec requires to be returned again.
 */
export type TokenBox = SecretBox;

// The purpose tokens were sealed under before the box moved to kit: it must not change, or
// every stored token would become unreadable.
const AUTH_TOKEN_PURPOSE = 'auth-token-encryption';

export function createTokenBox(secretKey: string): TokenBox {
  return createSecretBox(secretKey, AUTH_TOKEN_PURPOSE);
}
