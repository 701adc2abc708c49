import { BLOCKED_ADDRESS_CODE, createGuardedAgent, standardWebhookHeaders } from '@switchboard/kit';
import { request } from 'undici';

export interface PartnerEvent {
  url: string;
  /** The partner's own headers (`configurator.webhook_headers`); ours win on a clash. */
  headers: Record<string, string>;
  body: unknown;
  /** The partner's Standard Webhooks secret (`whsec_…`). */
  secret: string;
  /** Stable per event, so a retried delivery carries the same `webhook-id`. */
  messageId: string;
}

export type DeliveryOutcome = { ok: true } | { ok: false; reason: string; retryable: boolean };

export interface PartnerEventSender {
  deliver(event: PartnerEvent): Promise<DeliveryOutcome>;
  close(): Promise<void>;
}

const OWN_HEADERS = new Set([
  'content-type',
  'webhook-id',
  'webhook-timestamp',
  'webhook-signature',
  'host',
  'content-length',
]);

/**
 * POSTs the partner's asynchronous events (token, errors) signed like per-user webhooks
 * (Standard Webhooks: `webhook-id`, `webhook-timestamp`, `webhook-signature`), through kit's
 * SSRF guard: private and loopback targets only when explicitly allowed (local runs, tests).
 * One attempt per call; the lifecycle schedules the retries.
 */
export function createPartnerEventSender(opts: {
  allowPrivateTargets: boolean;
  timeoutMs?: number;
}): PartnerEventSender {
  const timeoutMs = opts.timeoutMs ?? 15_000;
  const agent = createGuardedAgent({
    allowPrivateTargets: opts.allowPrivateTargets,
    connectTimeoutMs: timeoutMs,
  });
  return {
    async deliver(event) {
      const body = JSON.stringify(event.body);
      const partnerHeaders = Object.fromEntries(
        Object.entries(event.headers).filter(([name]) => !OWN_HEADERS.has(name.toLowerCase())),
      );
      try {
        const res = await request(event.url, {
          method: 'POST',
          dispatcher: agent,
          headers: {
            ...partnerHeaders,
            'content-type': 'application/json',
            ...standardWebhookHeaders([event.secret], event.messageId, body),
          },
          body,
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
        });
        await res.body.dump();
        if (res.statusCode >= 200 && res.statusCode < 300) return { ok: true };
        return { ok: false, reason: `answered ${res.statusCode}`, retryable: true };
      } catch (err) {
        const code = (err as { code?: string }).code;
        return {
          ok: false,
          reason: `${code ?? 'error'}: ${(err as Error).message}`,
          // A refused target stays refused; anything else may pass later.
          retryable: code !== BLOCKED_ADDRESS_CODE,
        };
      }
    },
    async close() {
      await agent.close();
    },
  };
}
