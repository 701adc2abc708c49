import { createGuardedAgent, type Logger } from '@switchboard/kit';
import webpush from 'web-push';
import { type PushPlatform, parseWebPushToken } from '../domain/push-tokens.ts';

/** What a device is shown for one new customer message. */
export interface Notification {
  title: string;
  body: string;
  /** The chat to open. */
  wa_id: string;
  message_id: string;
}

/** `gone`: the push service no longer knows the token (404/410): delete it. */
export type PushOutcome = 'sent' | 'gone' | 'failed';

/** The notification port: one sender per platform. */
export interface PushSender {
  send(token: string, n: Notification): Promise<PushOutcome>;
  close(): Promise<void>;
}

/**
 * Web Push (RFC 8030 delivery, RFC 8291 payload encryption `aes128gcm`, RFC 8292 VAPID): the
 * `web-push` package encrypts and signs, the request itself goes through the SSRF guard,
 * since subscription endpoints are user-given URLs.
 */
export function createWebPushSender(opts: {
  vapid: { subject: string; publicKey: string; privateKey: string };
  allowPrivateTargets: boolean;
  timeoutMs?: number;
  log: Logger;
}): PushSender {
  const agent = createGuardedAgent({
    allowPrivateTargets: opts.allowPrivateTargets,
    connectTimeoutMs: 5_000,
    maxResponseBytes: 64 * 1024,
  });
  const timeoutMs = opts.timeoutMs ?? 10_000;
  return {
    async send(token, n) {
      const subscription = parseWebPushToken(token);
      if (!subscription.ok) return 'gone';
      const { endpoint, keys } = subscription.value;
      const details = webpush.generateRequestDetails({ endpoint, keys }, JSON.stringify(n), {
        vapidDetails: opts.vapid,
        TTL: 3600,
        contentEncoding: 'aes128gcm',
        urgency: 'high',
      });
      const url = new URL(details.endpoint);
      try {
        const res = await agent.request({
          origin: url.origin,
          path: `${url.pathname}${url.search}`,
          method: 'POST',
          headers: details.headers as Record<string, string>,
          body: details.body,
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
        });
        await res.body.dump();
        if (res.statusCode === 404 || res.statusCode === 410) return 'gone';
        if (res.statusCode >= 200 && res.statusCode < 300) return 'sent';
        opts.log.warn({ status: res.statusCode, origin: url.origin }, 'push service refused a notification');
        return 'failed';
      } catch (err) {
        opts.log.warn({ err, origin: url.origin }, 'push service not reached');
        return 'failed';
      }
    },
    async close() {
      await agent.close();
    },
  };
}

/**
 * FCM and APNs sit behind the same port but are not configured in this build: they need the
 * project's service-account credentials (FCM HTTP v1) or a `.p8` key, key id and team id
 * (APNs). Their tokens are kept and listed; sending to them logs once that nothing was sent.
 */
export function createUnconfiguredSender(platform: PushPlatform, log: Logger): PushSender {
  let warned = false;
  return {
    async send() {
      if (!warned) {
        warned = true;
        log.warn({ platform }, 'push platform not configured: notifications to its tokens are not sent');
      }
      return 'failed';
    },
    async close() {},
  };
}
