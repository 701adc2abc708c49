import { createHash, createHmac, createSecretKey, type KeyObject, randomBytes } from 'node:crypto';

const PREFIX = 'whsec_';

/** A fresh Standard Webhooks secret: `whsec_` and base64 of 32 random bytes. */
export function generateSecret(): string {
  return `${PREFIX}${randomBytes(32).toString('base64')}`;
}

// Decoding the secret and building a key object per delivery showed up in profiles; a
// process signs with few distinct secrets, so keep them (bounded, cleared when full).
const keys = new Map<string, KeyObject>();
const MAX_KEYS = 10_000;

function secretKey(secret: string): KeyObject {
  let key = keys.get(secret);
  if (!key) {
    if (keys.size >= MAX_KEYS) keys.clear();
    key = createSecretKey(
      Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64'),
    );
    keys.set(secret, key);
  }
  return key;
}

/** `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`, the Standard Webhooks signature. */
export function sign(secret: string, messageId: string, timestampSeconds: number, body: string): string {
  const mac = createHmac('sha256', secretKey(secret))
    .update(`${messageId}.${timestampSeconds}.${body}`, 'utf8')
    .digest('base64');
  return `v1,${mac}`;
}

/** One signature per valid secret, space-separated, so receivers on the old secret keep verifying during a rotation. */
export function signatureHeader(
  secrets: readonly string[],
  messageId: string,
  timestampSeconds: number,
  body: string,
): string {
  return secrets.map((s) => sign(s, messageId, timestampSeconds, body)).join(' ');
}

/** The secrets to sign with now: the current one, plus the previous one until its grace period ends. */
export function activeSecrets(
  current: string,
  previous: string | null,
  previousExpiresAt: Date | null,
  now: Date,
): string[] {
  if (previous && previousExpiresAt && previousExpiresAt.getTime() > now.getTime())
    return [current, previous];
  return [current];
}

/**
 * The `webhook-id` of one event at one webhook: derived, so every retry, every worker and a
 * replay all send the same id and receivers can de-duplicate on it.
 */
export function webhookMessageId(webhookId: string, eventId: string): string {
  const digest = createHash('sha256').update(`${webhookId}\n${eventId}`).digest('base64url');
  return `msg_${digest.slice(0, 32)}`;
}

/** The Standard Webhooks headers of one message: its id, when it was signed, and its signature with each secret. */
export function standardWebhookHeaders(
  secrets: readonly string[],
  messageId: string,
  body: string,
  now: Date = new Date(),
): { 'webhook-id': string; 'webhook-timestamp': string; 'webhook-signature': string } {
  const timestamp = Math.floor(now.getTime() / 1000);
  return {
    'webhook-id': messageId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signatureHeader(secrets, messageId, timestamp, body),
  };
}
