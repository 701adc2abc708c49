import type { Span } from '@opentelemetry/api';
import type { Logger } from '@switchboard/kit';
import { activeSecrets, standardWebhookHeaders, webhookMessageId } from '@switchboard/kit';
import type { NetworkEvent, TestOutcome } from '@switchboard/proto';
import type { DeliveryClient } from '../adapters/http-client.ts';
import type { OwnerDirectory } from '../adapters/owners.ts';
import type { DeadLetterReason, DeliveryTrigger, DisabledReason, NewAttempt, WebhookRow } from '../db.ts';
import { audienceOf } from '../domain/audience.ts';
import { type AttemptResult, type Classified, classify } from '../domain/outcome.ts';
import { nextRetry } from '../domain/retry.ts';
import type { FanoutSettings } from '../domain/settings.ts';
import { buildTestEvent } from '../domain/test-event.ts';
import type { AttemptLog } from '../store/attempt-log.ts';
import type { WebhookStore } from '../store/deliveries.ts';
import type { Disposition } from './consumer-loop.ts';

/** Told when the engine changed a webhook on its own (410, failing too long). */
export type DisabledListener = (webhook: WebhookRow, reason: DisabledReason) => void;

export interface DeliveryContext {
  readonly trigger: Exclude<DeliveryTrigger, 'test'>;
  /** JetStream's delivery count: 1 on the first delivery, when no attempt was made yet. */
  readonly deliveryCount: number;
  /** When the stream stored the message: attempts for it were made after. */
  readonly publishedAtMs: number;
  readonly span: Span;
}

export interface DeliveryEngine {
  deliver(webhookId: string, event: NetworkEvent, ctx: DeliveryContext): Promise<Disposition>;
  /** One attempt of a test event, no retries, nothing disabled: the caller sees the outcome. */
  test(webhook: WebhookRow): Promise<TestOutcome>;
  /** Attempts this process made for events and replays since it started. */
  readonly attempts: number;
}

// Attempts are stamped by the worker's clock, the message by the server's: a second's slack
// keeps a small skew from hiding the message's own attempts (a replay follows its dead letter
// by much more than that).
const CLOCK_SLACK_MS = 1_000;
const publishedSince = (ctx: DeliveryContext) => new Date(ctx.publishedAtMs - CLOCK_SLACK_MS);

/** The Standard Webhooks headers for one attempt, after the webhook's static ones. */
export function deliveryHeaders(
  webhook: WebhookRow,
  messageId: string,
  body: string,
  now: Date,
): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(webhook.headers)) headers[k.toLowerCase()] = v;
  const secrets = activeSecrets(
    webhook.secret,
    webhook.previous_secret,
    webhook.previous_secret_expires_at,
    now,
  );
  return {
    ...headers,
    'content-type': 'application/json',
    ...standardWebhookHeaders(secrets, messageId, body, now),
  };
}

/** What an attempt's log entry and a test delivery's answer both say of how it went. */
function outcomeOf(result: AttemptResult, c: Classified) {
  return {
    success: c.kind === 'success',
    status_code: result.kind === 'response' ? result.status : null,
    duration_ms: result.durationMs,
    error_class: c.kind === 'success' ? null : c.errorClass,
    error: result.kind === 'error' ? result.message : null,
    response_excerpt: result.kind === 'response' ? result.excerpt : null,
  };
}

function attemptEntry(
  webhook: WebhookRow,
  eventId: string,
  messageId: string,
  attempt: number,
  trigger: DeliveryTrigger,
  startedAt: Date,
  result: AttemptResult,
  c: Classified,
): NewAttempt {
  return {
    webhook_id: webhook.id,
    event_id: eventId,
    message_id: messageId,
    attempt,
    trigger,
    url: webhook.url,
    ...outcomeOf(result, c),
    next_attempt_at: null,
    dead_lettered: false,
    attempted_at: startedAt,
  };
}

/**
 * One delivery attempt and what follows from it: ack on 2xx, the retry schedule through a
 * delayed nak otherwise, a dead letter and a term when attempts run out, and the webhook
 * disabled on 410 or after failing for too long.
 */
export function createDeliveryEngine(deps: {
  store: WebhookStore;
  client: DeliveryClient;
  attemptLog: AttemptLog;
  owners: OwnerDirectory;
  settings: FanoutSettings;
  log: Logger;
  onDisabled: DisabledListener;
  random?: () => number;
}): DeliveryEngine {
  const { store, client, attemptLog, settings } = deps;
  const attempts = settings.retry.schedule.length;
  let made = 0;

  async function giveUp(
    webhook: WebhookRow,
    event: NetworkEvent,
    messageId: string,
    reason: DeadLetterReason,
    attempt: number,
    result: AttemptResult | undefined,
  ): Promise<Disposition> {
    const kept = await store.recordDeadLetter({
      webhook_id: webhook.id,
      event_id: event.event_id,
      message_id: messageId,
      received_at: new Date(event.received_at),
      kinds: JSON.stringify(event.kinds),
      wa_ids: JSON.stringify(event.wa_ids),
      chats: event.chats ? JSON.stringify(event.chats) : null,
      body: event.body,
      reason,
      attempts: attempt,
      last_status_code: result?.kind === 'response' ? result.status : null,
      last_error: result?.kind === 'error' ? result.message : null,
    });
    return { kind: 'term', reason: kept ? `dead-lettered: ${reason}` : 'webhook deleted' };
  }

  async function disable(webhook: WebhookRow, reason: DisabledReason): Promise<void> {
    const changed = await store.disable(webhook.id, reason);
    if (changed) {
      deps.log.warn({ webhook: webhook.id, reason }, 'webhook disabled');
      deps.onDisabled(changed, reason);
    }
  }

  async function deliver(webhookId: string, event: NetworkEvent, ctx: DeliveryContext): Promise<Disposition> {
    const webhook = await store.load(webhookId);
    if (!webhook) return { kind: 'term', reason: 'webhook deleted' };
    // Disabled while this message was on its way: leave it for when the webhook is enabled again.
    if (!webhook.enabled) return { kind: 'hold' };
    // Rights are checked now, not when the webhook was made: a changed role, permission,
    // assignment or deactivation applies to the next event.
    const audience = audienceOf(event, await deps.owners.principalOf(webhook.owner_user_id));
    if (audience.kind === 'none') {
      ctx.span.setAttributes({
        'switchboard.webhook.id': webhook.id,
        'switchboard.webhook.skipped': audience.reason,
      });
      return { kind: 'ack' };
    }
    const body = audience.kind === 'partial' ? audience.body : event.body;

    // JetStream's count also grows when this worker failed before a POST (database down, the
    // gateway not answering); only POSTs made use up the schedule, so a redelivery counts them.
    const attempt =
      ctx.deliveryCount === 1
        ? 1
        : (await store.failedAttempts(webhook.id, event.event_id, ctx.trigger, publishedSince(ctx))) + 1;
    const messageId = webhookMessageId(webhook.id, event.event_id);
    ctx.span.setAttributes({
      'switchboard.webhook.id': webhook.id,
      'switchboard.webhook.message_id': messageId,
      'switchboard.webhook.attempt': attempt,
      'switchboard.event_id': event.event_id,
    });
    // A worker died during the last attempt: the limit is reached, do not send once more.
    if (attempt > attempts)
      return giveUp(webhook, event, messageId, 'attempts_exhausted', attempt, undefined);

    const startedAt = new Date();
    made++;
    const result = await client.post(webhook.url, deliveryHeaders(webhook, messageId, body, startedAt), body);
    const now = new Date();
    const c = classify(result, now.getTime());
    const entry = attemptEntry(
      webhook,
      event.event_id,
      messageId,
      attempt,
      ctx.trigger,
      startedAt,
      result,
      c,
    );
    if (result.kind === 'response') ctx.span.setAttribute('http.response.status_code', result.status);

    if (c.kind === 'success') {
      await attemptLog.record(entry);
      if (webhook.failing_since) await store.clearFailing(webhook.id);
      return { kind: 'ack' };
    }

    if (c.kind === 'gone') {
      const d = await giveUp(webhook, event, messageId, 'gone', attempt, result);
      await attemptLog.record({ ...entry, dead_lettered: true });
      await disable(webhook, 'gone');
      return d;
    }

    const failingSince = webhook.failing_since ?? now;
    if (!webhook.failing_since) await store.markFailing(webhook.id, now);
    if (now.getTime() - failingSince.getTime() >= settings.disableAfterMs) {
      const d = await giveUp(webhook, event, messageId, 'failing', attempt, result);
      await attemptLog.record({ ...entry, dead_lettered: true });
      await disable(webhook, 'failing');
      return d;
    }

    const decision = nextRetry(settings.retry, attempt, c, deps.random);
    if (decision.kind === 'exhausted') {
      const d = await giveUp(webhook, event, messageId, 'attempts_exhausted', attempt, result);
      await attemptLog.record({ ...entry, dead_lettered: true });
      return d;
    }
    await attemptLog.record({ ...entry, next_attempt_at: new Date(now.getTime() + decision.delayMs) });
    return { kind: 'nak', delayMs: decision.delayMs };
  }

  async function test(webhook: WebhookRow): Promise<TestOutcome> {
    const { eventId, body } = buildTestEvent(new Date());
    const messageId = webhookMessageId(webhook.id, eventId);
    const startedAt = new Date();
    const result = await client.post(
      webhook.url,
      deliveryHeaders(webhook, messageId, body, startedAt),
      body,
      Math.min(settings.attemptTimeoutMs, 30_000),
    );
    const c = classify(result, Date.now());
    await attemptLog.record(attemptEntry(webhook, eventId, messageId, 1, 'test', startedAt, result, c));
    return {
      ...outcomeOf(result, c),
      message_id: messageId,
      event_id: eventId,
    };
  }

  return {
    deliver,
    test,
    get attempts() {
      return made;
    },
  };
}
