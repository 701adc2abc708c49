import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { INSTANCE_SECRET_KEY_MIN_LENGTH } from './secrets.ts';

/**
 * A value one service of the instance hands another over HTTP and the receiver must trust
 * (who the gateway authenticated): `<base64url payload>.<base64url HMAC-SHA256>`, keyed by
 * HKDF of the instance secret with `purpose`, so the key serves nothing else.
 */
export interface HeaderSigner {
  sign(payload: string): string;
  /** The payload when the signature holds, else undefined. */
  verify(value: string): string | undefined;
}

const SALT = 'switchboard-signed-header';

export function createHeaderSigner(instanceSecretKey: string, purpose: string): HeaderSigner {
  if (instanceSecretKey.length < INSTANCE_SECRET_KEY_MIN_LENGTH) {
    throw new Error(
      `the instance secret key must have at least ${INSTANCE_SECRET_KEY_MIN_LENGTH} characters`,
    );
  }
  if (purpose === '') throw new Error('a signed header needs a purpose');
  const key = Buffer.from(hkdfSync('sha256', instanceSecretKey, SALT, purpose, 32));
  const mac = (body: string) => createHmac('sha256', key).update(body).digest();
  return {
    sign(payload) {
      const body = Buffer.from(payload, 'utf8').toString('base64url');
      return `${body}.${mac(body).toString('base64url')}`;
    },
    verify(value) {
      const dot = value.indexOf('.');
      if (dot <= 0) return undefined;
      const body = value.slice(0, dot);
      const given = Buffer.from(value.slice(dot + 1), 'base64url');
      const expected = mac(body);
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
      return Buffer.from(body, 'base64url').toString('utf8');
    },
  };
}
