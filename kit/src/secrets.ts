import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { z } from 'zod';

/** Shorter instance secrets are refused: the derived keys are only as strong as this input. */
export const INSTANCE_SECRET_KEY_MIN_LENGTH = 32;

/**
 * `INBOX_SECRET_KEY` in a service's environment. The message names what the key is for, so an
 * operator who forgot it on one service does not have to guess.
 */
export const InstanceSecretKeySchema = z
  .string({
    error: (issue) =>
      issue.input === undefined
        ? `required: the instance secret (at least ${INSTANCE_SECRET_KEY_MIN_LENGTH} random characters, the same on every service of the instance)`
        : 'expected a string',
  })
  .min(INSTANCE_SECRET_KEY_MIN_LENGTH, `use at least ${INSTANCE_SECRET_KEY_MIN_LENGTH} random characters`);

/**
 * Authenticated encryption of small values kept at rest that must stay readable (tokens the API
 * returns again, webhook signing keys): AES-256-GCM. Layout of a sealed value: 12-byte IV,
 * 16-byte tag, ciphertext. Opening a value that was changed, or sealed under another key or
 * purpose, throws.
 */
export interface SecretBox {
  seal(plain: string): Buffer;
  open(sealed: Buffer): string;
}

const IV_BYTES = 12;
const TAG_BYTES = 16;
// Part of the derivation since auth tokens were first sealed: changing it would orphan them.
const HKDF_SALT = 'switchboard';

/**
 * A box whose key is derived from the instance secret with HKDF-SHA256, `purpose` as the info.
 * Every use names its own purpose, so a key leaked or misused in one place opens nothing sealed
 * for another, and a value copied between uses fails authentication instead of decrypting.
 */
export function createSecretBox(instanceSecretKey: string, purpose: string): SecretBox {
  if (instanceSecretKey.length < INSTANCE_SECRET_KEY_MIN_LENGTH) {
    throw new Error(
      `the instance secret key must have at least ${INSTANCE_SECRET_KEY_MIN_LENGTH} characters`,
    );
  }
  if (purpose === '') throw new Error('a secret box needs a purpose');
  const key = Buffer.from(hkdfSync('sha256', instanceSecretKey, HKDF_SALT, purpose, 32));
  return {
    seal(plain) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return Buffer.concat([iv, cipher.getAuthTag(), body]);
    },
    open(sealed) {
      if (sealed.length < IV_BYTES + TAG_BYTES) throw new Error('sealed value too short');
      const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, IV_BYTES));
      decipher.setAuthTag(sealed.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      return Buffer.concat([
        decipher.update(sealed.subarray(IV_BYTES + TAG_BYTES)),
        decipher.final(),
      ]).toString('utf8');
    },
  };
}
