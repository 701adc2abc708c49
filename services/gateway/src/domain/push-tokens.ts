import { issuesText } from '@switchboard/proto';
import { z } from 'zod';

export const PushPlatformSchema = z.enum(['fcm', 'apns', 'webpush']);
export type PushPlatform = z.infer<typeof PushPlatformSchema>;

const base64url = (bytes: number) =>
  z
    .string()
    .regex(/^[A-Za-z0-9_-]+={0,2}$/, 'base64url')
    .refine((s) => Buffer.from(s, 'base64url').length === bytes, `${bytes} bytes, base64url`);

/**
 * A Web Push subscription as `PushSubscription.toJSON()` gives it (W3C Push API): the push
 * service's endpoint and the keys of RFC 8291 (`p256dh`: the browser's P-256 public key,
 * uncompressed, 65 bytes; `auth`: the 16-byte authentication secret).
 */
export const WebPushSubscriptionSchema = z.object({
  endpoint: z.url({ protocol: /^https?$/ }).max(2000),
  expirationTime: z.number().nullable().optional(),
  keys: z.object({ p256dh: base64url(65), auth: base64url(16) }),
});
export type WebPushSubscription = z.infer<typeof WebPushSubscriptionSchema>;

/** The subscription of a `webpush` token, or the reason it is none. */
export function parseWebPushToken(
  token: string,
): { ok: true; value: WebPushSubscription } | { ok: false; reason: string } {
  let json: unknown;
  try {
    json = JSON.parse(token);
  } catch {
    return {
      ok: false,
      reason: 'A webpush token is the subscription JSON (endpoint, keys.p256dh, keys.auth) as a string.',
    };
  }
  const parsed = WebPushSubscriptionSchema.safeParse(json);
  if (!parsed.success) {
    return {
      ok: false,
      reason: `Not a Web Push subscription: ${issuesText(parsed.error.issues)}`,
    };
  }
  return { ok: true, value: parsed.data };
}

/** A token stops receiving when it was not registered again within the TTL. */
export function isExpired(registeredAt: Date, ttlDays: number, now: Date = new Date()): boolean {
  return now.getTime() - registeredAt.getTime() > ttlDays * 86_400_000;
}
