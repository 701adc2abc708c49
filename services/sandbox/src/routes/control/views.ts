import { isWindowOpen } from '../../domain/window.ts';
import { outboundMediaIds } from '../../domain/wire.ts';
import type { BusinessNumber, Customer, SentMessage, WebhookDelivery } from '../../store/model.ts';

export function numberView(n: BusinessNumber) {
  return {
    phone_number_id: n.phoneNumberId,
    display_phone_number: n.displayPhoneNumber,
    waba_id: n.wabaId,
    api_key: n.apiKey,
    webhook_secret: n.webhookSecret,
    webhook_url: n.webhook?.url ?? null,
    clock_offset_seconds: Math.round(n.clockOffsetMs / 1000),
    behaviour: {
      status_delays_ms: { ...n.behaviour.statusDelaysMs },
      read_without_delivered_rate: n.behaviour.readWithoutDeliveredRate,
      duplicate_status_rate: n.behaviour.duplicateStatusRate,
      rate_limit_per_second: n.behaviour.rateLimitPerSecond,
      template_opens_window: n.behaviour.templateOpensWindow,
    },
  };
}

export function customerView(n: BusinessNumber, c: Customer, nowSeconds: number) {
  return {
    wa_id: c.waId,
    profile_name: c.profileName,
    undeliverable: c.undeliverable,
    never_reads: c.neverReads,
    blocked: c.blockedBusiness,
    blocked_by_business: n.blockedUsers.has(c.waId),
    last_message_at: c.lastMessageAt ?? null,
    window_expires_at: c.windowExpiresAt ?? null,
    window_open: isWindowOpen(c.windowExpiresAt, nowSeconds),
  };
}

const RANK: Record<string, number> = { sent: 1, delivered: 2, read: 3 };

/** The furthest status a message reached; a failure ends it whatever came before. */
export function furthestStatus(sent: SentMessage): string | null {
  if (sent.statuses.some((s) => s.status === 'failed')) return 'failed';
  let best: string | null = null;
  for (const s of sent.statuses) if ((RANK[s.status] ?? 0) > (best ? (RANK[best] ?? 0) : 0)) best = s.status;
  return best;
}

/** The uploaded files a message names by id, as the number stores them. */
function sentMedia(number: BusinessNumber, sent: SentMessage) {
  return outboundMediaIds(sent.message).flatMap((id) => {
    const m = number.media.get(id);
    return m ? [{ id, mime_type: m.mimeType, size: m.data.length, sha256: m.sha256 }] : [];
  });
}

export function receivedView(sent: SentMessage, number: BusinessNumber) {
  return {
    id: sent.id,
    type: sent.message.type,
    accepted_at: sent.acceptedAt,
    message: { ...sent.message },
    status: furthestStatus(sent),
    statuses: sent.statuses.map((s) => ({
      status: s.status,
      timestamp: s.timestamp,
      duplicate: s.duplicate,
      ...(s.errors ? { errors: s.errors } : {}),
    })),
    links: sent.links.map((l) => ({ ...l })),
    media: sentMedia(number, sent),
  };
}

export function deliveryView(d: WebhookDelivery) {
  return {
    id: d.id,
    kind: d.kind,
    refs: [...d.refs],
    state: d.state,
    created_at: d.createdAt,
    body: d.body,
    attempts: d.attempts.map((a) => ({
      at: a.at,
      url: a.url ?? null,
      status: a.status ?? null,
      error: a.error ?? null,
    })),
  };
}
