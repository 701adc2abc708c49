import { randomUUID } from 'node:crypto';
import type { Logger } from '@switchboard/kit';
import type { OutboundHttp } from '../adapters/http-out.ts';
import type { Scheduler } from '../adapters/scheduler.ts';
import { HUB_SIGNATURE_HEADER, hubSignature256, type MessagesWebhookBody } from '../domain/wire.ts';
import type { BusinessNumber, WebhookDelivery } from '../store/model.ts';

const KEPT_DELIVERIES = 2_000;

export interface WebhookDispatcher {
  /** Signs and posts the body to the number's webhook, retrying on the schedule until it answers 200. */
  post(
    number: BusinessNumber,
    kind: WebhookDelivery['kind'],
    refs: readonly string[],
    body: MessagesWebhookBody,
  ): WebhookDelivery;
  /** Waits for attempts already on the wire. */
  drain(): Promise<void>;
}

export function createWebhookDispatcher(deps: {
  http: OutboundHttp;
  scheduler: Scheduler;
  log: Logger;
  retryScheduleMs: readonly number[];
  now: () => number;
}): WebhookDispatcher {
  const inFlight = new Set<Promise<void>>();

  async function attempt(number: BusinessNumber, delivery: WebhookDelivery, index: number): Promise<void> {
    // The URL and secret are read per attempt: the inbox may register its webhook after the event.
    const target = number.webhook;
    let status: number | undefined;
    let error: string | undefined;
    if (!target) {
      error = 'no webhook URL is configured for this number';
    } else {
      try {
        status = await deps.http.postWebhook(target.url, delivery.body, {
          ...target.headers,
          'content-type': 'application/json',
          'user-agent': 'switchboard-sandbox/1.0 (WhatsApp Cloud API emulator)',
          [HUB_SIGNATURE_HEADER]: hubSignature256(number.webhookSecret, delivery.body),
        });
      } catch (err) {
        error = err instanceof Error ? err.message : String(err);
      }
    }
    delivery.attempts.push({ at: deps.now(), url: target?.url, status, error });
    if (status === 200) {
      delivery.state = 'delivered';
      return;
    }
    const wait = deps.retryScheduleMs[index];
    if (wait === undefined) {
      delivery.state = 'gave_up';
      deps.log.warn(
        { delivery: delivery.id, attempts: delivery.attempts.length },
        'webhook delivery abandoned',
      );
      return;
    }
    deps.log.debug(
      { delivery: delivery.id, status, error, retryInMs: wait },
      'webhook delivery failed, will retry',
    );
    deps.scheduler.after(wait, () => run(number, delivery, index + 1));
  }

  function run(number: BusinessNumber, delivery: WebhookDelivery, index: number): void {
    const p = attempt(number, delivery, index).finally(() => inFlight.delete(p));
    inFlight.add(p);
  }

  return {
    post(number, kind, refs, body) {
      const delivery: WebhookDelivery = {
        id: randomUUID(),
        kind,
        refs,
        body: JSON.stringify(body),
        createdAt: deps.now(),
        state: 'pending',
        attempts: [],
      };
      number.deliveries.push(delivery);
      if (number.deliveries.length > KEPT_DELIVERIES)
        number.deliveries.splice(0, number.deliveries.length - KEPT_DELIVERIES);
      run(number, delivery, 0);
      return delivery;
    },
    async drain() {
      await Promise.allSettled([...inFlight]);
    },
  };
}
