import { createHmac, timingSafeEqual } from 'node:crypto';

export const HUB_SIGNATURE_HEADER = 'x-hub-signature-256';

/** `X-Hub-Signature-256` value for a raw webhook body: `sha256=<hex HMAC-SHA256 with the app secret>`. */
export function hubSignature256(secret: string, rawBody: string | Uint8Array): string {
  return `sha256=${createHmac('sha256', secret).update(rawBody).digest('hex')}`;
}

/** Constant-time check of an `X-Hub-Signature-256` header against the raw body. */
export function verifyHubSignature256(
  secret: string,
  rawBody: string | Uint8Array,
  header: string | undefined,
): boolean {
  if (!header?.startsWith('sha256=')) return false;
  const given = Buffer.from(header.slice('sha256='.length), 'hex');
  const expected = createHmac('sha256', secret).update(rawBody).digest();
  return given.length === expected.length && timingSafeEqual(given, expected);
}
