import { BLOCKED_ADDRESS_CODE, createGuardedAgent, standardWebhookHeaders } from '@switchboard/kit';
import { RESERVED_WEBHOOK_HEADERS } from '@switchboard/proto';
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

/**
 * The create request refuses these names now; instances recorded before may still hold them,
 * and their events go out without them rather than not at all.
 */
const OWN_HEADERS: ReadonlySet<string> = new Set(RESERVED_WEBHOOK_HEADERS);

/**
 * undici's refusals of the request itself (a header name that is no token, a value with CR/LF,
 * a header it does not support), not of the network: the same event is refused the same way on
 * every attempt, so retrying would only hide it for the whole schedule. The create request
 * refuses such headers now; instances recorded before may still hold them.
 */
const ARGUMENT_ERROR_CODES: ReadonlySet<string> = new Set(['UND_ERR_INVALID_ARG', 'UND_ERR_NOT_SUPPORTED']);

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
        const message = (err as Error).message;
        if (code !== undefined && ARGUMENT_ERROR_CODES.has(code)) {
          // The lifecycle logs this reason: it must say why the event is given up at once.
          return {
            ok: false,
            reason: `${code}: ${message} (refused before sending, e.g. a partner header; not retried)`,
            retryable: false,
          };
        }
        return {
          ok: false,
          reason: `${code ?? 'error'}: ${message}`,
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
