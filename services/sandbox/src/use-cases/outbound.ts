import type { Logger } from '@switchboard/kit';
import type { OutboundHttp } from '../adapters/http-out.ts';
import type { Scheduler } from '../adapters/scheduler.ts';
import { statusBody, statusObject } from '../domain/bodies.ts';
import { errorItem, NetworkFailure } from '../domain/failure.ts';
import { newWamid } from '../domain/ids.ts';
import { checkOutbound } from '../domain/outbound-checks.ts';
import { secondsUntilNextWindow, takeRateSlot } from '../domain/rate-limit.ts';
import { planStatuses } from '../domain/status-plan.ts';
import { windowAfterTemplate } from '../domain/window.ts';
import {
  baseMimeType,
  type MessageStatusValue,
  mediaLimitFor,
  NetworkErrorCode,
  type NetworkErrorItem,
  normalizeRecipient,
  type OutboundMessage,
  outboundMediaLinks,
  type SendMessageResponse,
} from '../domain/wire.ts';
import type { BusinessNumber, FetchedLink, SentMessage } from '../store/model.ts';
import { ensureCustomer, numberNowMs, numberNowSeconds, type SandboxState } from '../store/store.ts';
import type { WebhookDispatcher } from './webhooks.ts';

export interface OutboundEngine {
  /** Checks and accepts a business message (or throws the network's refusal), then plays out its statuses. */
  accept(number: BusinessNumber, message: OutboundMessage): SendMessageResponse;
}

const LARGEST_MEDIA = 100 * 1024 * 1024;

export function createOutboundEngine(deps: {
  state: SandboxState;
  http: OutboundHttp;
  dispatcher: WebhookDispatcher;
  scheduler: Scheduler;
  random: () => number;
  log: Logger;
}): OutboundEngine {
  function emit(
    number: BusinessNumber,
    sent: SentMessage,
    status: MessageStatusValue,
    opts: { errors?: NetworkErrorItem[]; duplicate?: boolean } = {},
  ): void {
    const timestamp = numberNowSeconds(deps.state, number);
    sent.statuses.push({ status, timestamp, errors: opts.errors, duplicate: opts.duplicate ?? false });
    const subject = {
      id: sent.id,
      waId: sent.waId,
      category: sent.category,
      bizOpaqueCallbackData: sent.message.biz_opaque_callback_data,
    };
    const body = statusBody(number, statusObject(subject, status, timestamp, opts.errors));
    deps.dispatcher.post(number, 'statuses', [sent.id], body);
  }

  async function fetchLinks(sent: SentMessage): Promise<FetchedLink | undefined> {
    for (const link of outboundMediaLinks(sent.message)) {
      try {
        const got = await deps.http.fetchLink(link, LARGEST_MEDIA);
        const limit = mediaLimitFor(got.contentType);
        if (limit === undefined)
          throw new Error(`the link served ${baseMimeType(got.contentType)}, not a supported media type`);
        if (got.data.length > limit)
          throw new Error(`the media is larger than the ${limit}-byte limit for its type`);
        sent.links.push({
          link,
          ok: true,
          mimeType: baseMimeType(got.contentType),
          size: got.data.length,
          sha256: got.sha256,
        });
      } catch (err) {
        const failed = { link, ok: false, error: err instanceof Error ? err.message : String(err) };
        sent.links.push(failed);
        return failed;
      }
    }
    return undefined;
  }

  async function playOut(number: BusinessNumber, sent: SentMessage): Promise<void> {
    const delays = number.behaviour.statusDelaysMs;
    const brokenLink = await fetchLinks(sent);
    if (brokenLink) {
      const errors = [
        errorItem(NetworkErrorCode.mediaUploadError, `Media download failed: ${brokenLink.error}`),
      ];
      deps.scheduler.after(delays.sent, () => emit(number, sent, 'failed', { errors }));
      return;
    }
    // Read at play-out time: a test may flip the customer's settings right after sending.
    const customer = ensureCustomer(number, sent.waId);
    if (customer.undeliverable || customer.blockedBusiness) {
      const errors = [errorItem(NetworkErrorCode.messageUndeliverable)];
      deps.scheduler.after(delays.sent, () => emit(number, sent, 'failed', { errors }));
      return;
    }
    const plan = planStatuses(
      {
        delaysMs: delays,
        readWithoutDeliveredRate: number.behaviour.readWithoutDeliveredRate,
        duplicateStatusRate: number.behaviour.duplicateStatusRate,
        neverReads: customer.neverReads,
      },
      deps.random,
    );
    for (const step of plan) {
      deps.scheduler.after(step.delayMs, () =>
        emit(number, sent, step.status, { duplicate: step.duplicate }),
      );
    }
  }

  return {
    accept(number, message) {
      const nowMs = numberNowMs(deps.state, number);
      if (!takeRateSlot(number.rate, number.behaviour.rateLimitPerSecond, nowMs)) {
        throw new NetworkFailure(NetworkErrorCode.rateLimitHit, undefined, {
          retryAfterSeconds: secondsUntilNextWindow(number.rate, nowMs),
        });
      }
      const nowSeconds = Math.floor(nowMs / 1000);
      const waId = normalizeRecipient(message.to);
      const customer = number.customers.get(waId);
      const accepted = checkOutbound({
        message,
        waId,
        nowSeconds,
        windowExpiresAt: customer?.windowExpiresAt,
        blockedByBusiness: number.blockedUsers.has(waId),
        templates: number.templates,
        mediaExists: (id) => number.media.has(id),
      });

      const sent: SentMessage = {
        id: newWamid(waId),
        waId,
        message,
        acceptedAt: nowSeconds,
        category: accepted.category,
        statuses: [],
        links: [],
      };
      const recipient = ensureCustomer(number, waId);
      recipient.received.push(sent.id);
      number.sent.set(sent.id, sent);
      if (accepted.template && number.behaviour.templateOpensWindow) {
        recipient.windowExpiresAt = windowAfterTemplate(recipient.windowExpiresAt, nowSeconds);
      }
      playOut(number, sent).catch((err: unknown) =>
        deps.log.error({ err, wamid: sent.id }, 'status play-out failed'),
      );

      return {
        messaging_product: 'whatsapp',
        contacts: [{ input: message.to, wa_id: waId }],
        messages: [{ id: sent.id, ...(accepted.template ? { message_status: 'accepted' } : {}) }],
      };
    },
  };
}
