import type { Logger } from '@switchboard/kit';
import {
  classifyFailure,
  deliverMessageConsumer,
  NetworkError,
  networkEvent,
  type OutboundMessageInput,
} from '@switchboard/proto';
import type { Bus, Consumption, DeliveryContext, Disposition } from '@switchboard/proto/bus';
import type { NetworkClient } from '@switchboard/proto/network';
import type { Kysely } from 'kysely';
import type { ChatsDatabase } from '../db.ts';
import { nowSeconds } from '../domain/clock.ts';
import {
  clamp,
  FOLLOWER_POLL_MS,
  failedStatusBody,
  LEASE_RENEW_MS,
  LEASE_SECONDS,
  MAX_SEND_ATTEMPTS,
  redeliveryDelayMs,
  STALE_HEAD_SECONDS,
  WORKER_RETRY,
} from '../domain/delivery.ts';
import { createGroupCommit } from '../domain/group-commit.ts';
import { backoffMs } from '../domain/retry.ts';
import { chatAccessSubjects } from '../store/chats.ts';
import {
  type ClaimedSend,
  claimSendLease,
  failedSendErrors,
  headOfQueue,
  type QueueHead,
  recordSendFailed,
  recordSendsSent,
  renewSendLease,
  scheduleSendRetry,
  sendLeaseLeft,
  sendStatesHeadsAndClaims,
} from '../store/sends.ts';
import { persistWrite } from './persist-write.ts';

/** Bounds how long one command keeps its handler busy with a customer's backlog. */
const MAX_FOLLOWERS_PER_COMMAND = 20;

type Attempt =
  /** With the head of the customer's queue after it. */
  | { kind: 'sent'; next: QueueHead | undefined }
  | { kind: 'failed' }
  /** Not queued any more (sent or failed by another worker). */
  | { kind: 'gone' }
  /** Another worker holds the send right now. */
  | { kind: 'busy'; delayMs: number }
  | { kind: 'retry'; delayMs: number };

/**
 * The delivery worker: calls the network for each queued message.
 *
 * - Per customer in accept order (`send_seq`): a send goes to the network only when no earlier
 *   send to the same customer is still queued; otherwise its command waits (delayed nak, timed
 *   to the earlier send's next attempt). Customers never wait for each other.
 * - Throttling and outages are retried on the send's own schedule (`send_attempts`,
 *   `next_attempt_at`); meanwhile only that customer's later sends wait. After about two days
 *   the send is given up as failed.
 * - A rejection becomes a `failed` status with the network's error, stored and fanned out;
 *   it holds nothing up.
 * - A short lease (`send_lease_until`) makes one worker call the network for a send at a time;
 *   it is renewed while the call runs, together with the in-progress signal that keeps the
 *   command, so a crashed worker's send resumes within the 10-second AckWait.
 * - Database and NATS failures of the worker itself are retried without limit.
 */
export async function startDeliveryWorker(deps: {
  db: Kysely<ChatsDatabase>;
  bus: Bus;
  log: Logger;
  network: NetworkClient;
  phoneNumber: string;
}): Promise<Consumption> {
  const { db, bus, log, network } = deps;
  // Commands that arrived while a claim was running are claimed together, next; sends that
  // the network took while a mark was being written are marked together, next.
  const claims = createGroupCommit((ids: readonly string[]) =>
    sendStatesHeadsAndClaims(db, ids, LEASE_SECONDS),
  );
  const sentMarks = createGroupCommit((marks: readonly { id: string; wamid: string | null }[]) =>
    recordSendsSent(db, marks),
  );

  /** Publishes the failed status of a rejected send (idempotent: one event per message). */
  async function publishFailed(m: { id: string; wa_id: string }, errors: unknown[]): Promise<void> {
    const body = failedStatusBody(deps.phoneNumber, m.id, m.wa_id, errors);
    await bus.publish(
      networkEvent,
      {
        event_id: `failed-${m.id}`,
        kinds: ['status'],
        wa_ids: [m.wa_id],
        chats: await chatAccessSubjects(db, [m.wa_id]),
        received_at: Date.now(),
        body,
      },
      { idempotencyKey: `failed-${m.id}` },
    );
  }

  async function recordFailed(m: ClaimedSend, errors: unknown[]): Promise<void> {
    await persistWrite(() => recordSendFailed(db, m, errors, nowSeconds()), { what: 'failed send', log });
    await publishFailed(m, errors);
  }

  /** One network attempt for a queued send, under its lease (taken here unless `claimed`). */
  async function attempt(id: string, ctx: DeliveryContext, claimed?: ClaimedSend): Promise<Attempt> {
    const m = claimed ?? (await claimSendLease(db, id, LEASE_SECONDS));
    if (!m) {
      const held = await sendLeaseLeft(db, id);
      if (held?.send_state !== 'queued') return { kind: 'gone' };
      return { kind: 'busy', delayMs: clamp((held.left_ms ?? 0) + 100, 250, LEASE_SECONDS * 1000) };
    }
    const renew = setInterval(() => {
      ctx.working();
      renewSendLease(db, id, LEASE_SECONDS).catch(() => undefined);
    }, LEASE_RENEW_MS);
    try {
      let wamid: string | null;
      try {
        const res = await network.sendMessage(m.waba_payload as OutboundMessageInput);
        wamid = res.messages[0]?.id ?? null;
      } catch (err) {
        if (!(err instanceof NetworkError)) throw err;
        const attempts = m.send_attempts + 1;
        if (err.retryable && attempts < MAX_SEND_ATTEMPTS) {
          const delayMs = redeliveryDelayMs(attempts, err.retryAfterMs);
          await scheduleSendRetry(db, id, attempts, delayMs);
          log.warn(
            { message_id: id, attempt: attempts, code: err.code, kind: err.kind, delayMs },
            'network unavailable; send retried',
          );
          return { kind: 'retry', delayMs };
        }
        const title = err.retryable ? `Delivery retries exhausted: ${err.message}` : err.message;
        await recordFailed(m, [
          {
            code: err.code ?? err.status ?? 0,
            title,
            message: title,
            error_data: { details: err.details ?? err.message },
          },
        ]);
        return { kind: 'failed' };
      }
      // The network took it: losing this write would send it again. The lease renewal above
      // goes on meanwhile, so once the database is back the send is held again within seconds.
      let next: QueueHead | undefined;
      await persistWrite(
        async () => {
          next = await sentMarks.submit({ id, wamid });
        },
        { what: 'sent message', log, untilStored: true },
      );
      return { kind: 'sent', next };
    } finally {
      clearInterval(renew);
    }
  }

  async function deliver(id: string, ctx: DeliveryContext): Promise<Disposition | undefined> {
    const m = await claims.submit(id);
    if (!m) return undefined;
    if (m.send_state === 'failed' && ctx.deliveryCount > 1) {
      // A redelivery: the failed status may not have been published before (JetStream drops
      // a second copy of the event).
      await publishFailed(m, await failedSendErrors(db, id));
      return undefined;
    }
    if (m.send_state !== 'queued') return undefined;

    const head = m.head;
    if (!head) return undefined;
    if (head.id !== m.id) {
      // An earlier send to this customer is still unsent: this one waits for it.
      ctx.span.setAttribute('switchboard.waits_for', head.id);
      if (!head.leased && head.overdue_s > STALE_HEAD_SECONDS) {
        // Its own command should have brought it back by now (a lost or stuck command): take it.
        log.warn({ message_id: head.id, overdue_s: head.overdue_s }, 'overdue send taken over');
        await attempt(head.id, ctx);
        return { kind: 'nak', delayMs: 0 };
      }
      const waitMs = head.leased || head.due_in_ms <= 0 ? FOLLOWER_POLL_MS : head.due_in_ms + 100;
      return { kind: 'nak', delayMs: clamp(waitMs, FOLLOWER_POLL_MS, 60_000) };
    }
    if (head.due_in_ms > 0) return { kind: 'nak', delayMs: clamp(head.due_in_ms, 1, 10 * 60_000) };

    const outcome = await attempt(m.id, ctx, m.claimed);
    ctx.span.setAttribute('switchboard.send_outcome', outcome.kind);
    if (outcome.kind === 'busy' || outcome.kind === 'retry') return { kind: 'nak', delayMs: outcome.delayMs };
    await sendFollowers(m.wa_id, ctx, outcome.kind === 'sent' ? { next: outcome.next } : undefined);
    return undefined;
  }

  /**
   * The customer's next queued sends, now: their own commands wait (a delayed nak) while an
   * earlier send is unsent, and would otherwise each add up to FOLLOWER_POLL_MS to a burst of
   * replies to one customer. Their commands later find them sent and are acknowledged.
   */
  async function sendFollowers(
    waId: string,
    ctx: DeliveryContext,
    /** The head after the send just made, when its write answered it. */
    known?: { next: QueueHead | undefined },
  ): Promise<void> {
    let after = known;
    for (let i = 0; i < MAX_FOLLOWERS_PER_COMMAND; i++) {
      const head = after ? after.next : await headOfQueue(db, waId);
      if (!head || head.leased || head.due_in_ms > 0) return;
      const outcome = await attempt(head.id, ctx);
      if (outcome.kind !== 'sent' && outcome.kind !== 'failed') return;
      after = outcome.kind === 'sent' ? { next: outcome.next } : undefined;
    }
  }

  return bus.consume(
    deliverMessageConsumer,
    async ({ message_id }, ctx) => {
      try {
        return await deliver(message_id, ctx);
      } catch (err) {
        // The database or NATS failed (or a bug): the send stays queued and is tried again;
        // it is never dropped.
        const f = classifyFailure(err);
        log.error(
          { err, message_id, attempt: ctx.deliveryCount, failure: f.class, code: f.code },
          'delivery not handled; retried',
        );
        return { kind: 'nak', delayMs: backoffMs(ctx.deliveryCount, WORKER_RETRY) };
      }
    },
    {
      onError: (err, at) => log.error({ err, ...at }, 'delivery failed'),
      onPullError: (err) => log.warn({ err }, 'delivery commands not reachable; pulling again'),
    },
  );
}
