import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';

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
 * AES-256-GCM with a key derived from INBOX_SECRET_KEY. Layout: 12-byte IV, 16-byte tag,
 * ciphertext. Used only for auth tokens, which the spec requires to be returned again.
 */
export interface TokenBox {
  seal(plain: string): Buffer;
  open(sealed: Buffer): string;
}

export function createTokenBox(secretKey: string): TokenBox {
  const key = Buffer.from(hkdfSync('sha256', secretKey, 'switchboard', 'auth-token-encryption', 32));
  return {
    seal(plain) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return Buffer.concat([iv, cipher.getAuthTag(), body]);
    },
    open(sealed) {
      const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, 12));
      decipher.setAuthTag(sealed.subarray(12, 28));
      return Buffer.concat([decipher.update(sealed.subarray(28)), decipher.final()]).toString('utf8');
    },
  };
}
