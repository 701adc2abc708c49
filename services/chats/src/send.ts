import { createHash, randomUUID } from 'node:crypto';
import type { Logger } from '@switchboard/kit';
import {
  assertMayWriteChat,
  type Bus,
  backoffMs,
  type Consumption,
  classifyFailure,
  type DeliveryContext,
  type Disposition,
  deliverMessage,
  deliverMessageConsumer,
  type MessageRecord,
  messagesWebhookBody,
  type NetworkClient,
  NetworkError,
  networkEvent,
  type OutboundMessageInput,
  type Principal,
  type RetryPolicy,
  type SendMessageRequest,
  ServiceError,
} from '@switchboard/proto';
import { type Kysely, type Selectable, sql } from 'kysely';
import type { ChatsDatabase, ChatsTable, MessagesTable } from './db.ts';
import { businessWindowEnd, windowExpiresAt } from './domain/window.ts';
import { chatAccessSubjects, ensureChat } from './store/chats.ts';
import { messageRecords, statusKey } from './store/views.ts';

type Db = Kysely<ChatsDatabase>;

const nowSeconds = () => Math.floor(Date.now() / 1000);

/** The body the network receives: the inbox request with `to` for `wa_id`. */
export function networkRequestOf(req: SendMessageRequest): OutboundMessageInput {
  const { wa_id, ...rest } = req;
  return {
    ...rest,
    messaging_product: 'whatsapp',
    recipient_type: 'individual',
    to: wa_id,
  } as OutboundMessageInput;
}

/** A chat that does not exist yet counts as unassigned. */
export function assertMayWrite(p: Principal, waId: string, chat: Selectable<ChatsTable> | undefined): void {
  assertMayWriteChat(p, chat ?? { wa_id: waId, assigned_to_user: null, assigned_group: null });
}

async function recordOf(db: Db, id: string): Promise<MessageRecord> {
  const row = await db.selectFrom('messages').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const [record] = await messageRecords(db, [row]);
  if (!record) throw new Error(`message ${id} has no chat`);
  return record;
}

/** A canonical form of a JSON value: object keys sorted, so key order never changes the hash. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** SHA-256 of a send request, stored with its Idempotency-Key to tell a retry from a reuse. */
export function requestHash(req: SendMessageRequest): string {
  return createHash('sha256').update(canonicalJson(req)).digest('hex');
}

export interface SendDeps {
  db: Db;
  bus: Bus;
  log: Logger;
}

/**
 * Accepts a message for sending: checks permission and the care window, stores it as queued
 * and queues a durable delivery command. The caller's 202 means the message is stored and
 * will be delivered; the network is called by the delivery worker, never on this path.
 */
export function createSender(deps: SendDeps) {
  const { db, bus } = deps;

  async function queue(id: string): Promise<void> {
    await bus.publish(deliverMessage, { message_id: id }, { idempotencyKey: id });
  }

  /**
   * Queues a stored message. When that fails the message is stored but its outcome unknown to
   * the caller: a 503 tells it to retry with the same Idempotency-Key, which finds the message
   * and queues it again (a message stored but never queued is also re-queued at start).
   */
  async function queueStored(id: string): Promise<void> {
    try {
      await queue(id);
    } catch (err) {
      deps.log.warn({ err, message_id: id }, 'message stored but not queued');
      throw ServiceError.unavailable(
        'nats',
        'The message is stored but could not be queued for delivery; retry with the same Idempotency-Key.',
        { cause: err },
      );
    }
  }

  async function send(p: Principal, req: SendMessageRequest, idempotencyKey: string | undefined) {
    const chat = await db.selectFrom('chats').selectAll().where('wa_id', '=', req.wa_id).executeTakeFirst();
    assertMayWrite(p, req.wa_id, chat);

    const hash = requestHash(req);
    if (idempotencyKey) {
      const existing = await db
        .selectFrom('messages')
        .select(['id', 'send_state', 'request_hash'])
        .where('sender_user_id', '=', p.user_id)
        .where('idempotency_key', '=', idempotencyKey)
        .executeTakeFirst();
      if (existing) {
        // Rows stored before request hashes were kept have none: they count as the same request.
        if (existing.request_hash !== null && existing.request_hash !== hash) {
          throw new ServiceError(
            'idempotency_key_reused',
            'This Idempotency-Key was already used for a different message; use a new key for a new message.',
          );
        }
        // The first attempt may have stored the message but failed to queue it.
        if (existing.send_state === 'queued') await queueStored(existing.id);
        return recordOf(db, existing.id);
      }
    }

    const now = nowSeconds();
    if (req.type !== 'template') {
      const expires = chat ? windowExpiresAt(chat) : null;
      if (expires === null || expires <= now) {
        throw new ServiceError(
          'window_closed',
          'The customer care window is closed: only templates can be sent until the customer writes again.',
          { details: { messaging_window_expires_at: expires } },
        );
      }
    }

    const id = randomUUID();
    try {
      await db.transaction().execute(async (trx) => {
        await ensureChat(trx, req.wa_id);
        await trx
          .insertInto('messages')
          .values({
            id,
            wamid: null,
            wa_id: req.wa_id,
            from_us: true,
            type: req.type,
            waba_payload: JSON.stringify(networkRequestOf(req)),
            sender_user_id: p.user_id,
            timestamp: now,
            send_state: 'queued',
            idempotency_key: idempotencyKey ?? null,
            request_hash: hash,
          })
          .execute();
        await trx
          .updateTable('chats')
          .set({
            last_message_at: sql<number>`greatest(last_message_at, ${now})`,
            ...(req.type === 'template' && {
              business_window_expires_at: sql<number>`greatest(coalesce(business_window_expires_at, 0), ${businessWindowEnd(now)})`,
            }),
          })
          .where('wa_id', '=', req.wa_id)
          .execute();
      });
    } catch (err) {
      // The same Idempotency-Key raced in twice: the other request stored it.
      if ((err as { code?: string }).code === '23505' && idempotencyKey) return send(p, req, idempotencyKey);
      throw err;
    }
    await queueStored(id);
    return recordOf(db, id);
  }

  /** Re-queues messages stored but never handed to the delivery worker (a crash between the two). */
  async function requeueStranded(olderThanSeconds = 60): Promise<number> {
    const rows = await db
      .selectFrom('messages')
      .select('id')
      .where('send_state', '=', 'queued')
      .where('created_at', '<', sql<Date>`now() - make_interval(secs => ${olderThanSeconds})`)
      .execute();
    for (const r of rows) await queue(r.id);
    return rows.length;
  }

  return { send, requeueStranded };
}

/** Delay before retrying a send the network could not take (outage, throttling). */
function redeliveryDelayMs(attempt: number, retryAfterMs: number | undefined): number {
  const backoff = Math.min(10 * 60_000, 2_000 * 2 ** Math.min(attempt - 1, 10));
  return Math.max(backoff, retryAfterMs ?? 0);
}

/** Network attempts before a send is given up as failed: about two days at the 10-minute cap. */
const MAX_SEND_ATTEMPTS = 300;
/** How long a worker's claim on a send lasts without renewal: a dead worker's claim lapses by then. */
const LEASE_SECONDS = 8;
const LEASE_RENEW_MS = 2_000;
/** How often a later send checks whether the earlier one to the same customer is done. */
const FOLLOWER_POLL_MS = 500;
/** An earlier send this late past its due time has lost its own command: a later one takes it over. */
const STALE_HEAD_SECONDS = 30;
/** Database or NATS failures of the worker itself: retried without limit. */
const WORKER_RETRY: RetryPolicy = {
  baseDelayMs: 1_000,
  maxDelayMs: 30_000,
  unknownAttempts: Number.POSITIVE_INFINITY,
  jitter: 0.2,
};

const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, Math.ceil(v)));

/** A failed-status body in the network's own shape, so the fan-out delivers rejections like any status. */
function failedStatusBody(phoneNumber: string, messageId: string, waId: string, errors: unknown[]): string {
  const number = { wabaId: 'switchboard', displayPhoneNumber: phoneNumber, phoneNumberId: phoneNumber };
  const status = {
    id: messageId,
    status: 'failed',
    timestamp: String(nowSeconds()),
    recipient_id: waId,
    errors,
  };
  return JSON.stringify(messagesWebhookBody(number, { statuses: [status] }));
}

type Attempt =
  | { kind: 'sent' }
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
  db: Db;
  bus: Bus;
  log: Logger;
  network: NetworkClient;
  phoneNumber: string;
}): Promise<Consumption> {
  const { db, bus, log, network } = deps;

  const leaseUntil = sql<Date>`now() + make_interval(secs => ${LEASE_SECONDS})`;

  /** The earliest unsent message of a customer, with its timing in database time. */
  async function headOf(waId: string) {
    return db
      .selectFrom('messages')
      .select([
        'id',
        sql<boolean>`coalesce(send_lease_until > now(), false)`.as('leased'),
        sql<number>`greatest(0, extract(epoch from (coalesce(next_attempt_at, now()) - now())) * 1000)::float8`.as(
          'due_in_ms',
        ),
        sql<number>`extract(epoch from (now() - coalesce(next_attempt_at, created_at)))::float8`.as(
          'overdue_s',
        ),
      ])
      .where('wa_id', '=', waId)
      .where('send_state', '=', 'queued')
      .orderBy('send_seq')
      .limit(1)
      .executeTakeFirst();
  }

  /** Retries a write whose loss would send a message twice, while the failure is transient. */
  async function persist(what: string, write: () => Promise<unknown>): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await write();
        return;
      } catch (err) {
        if (attempt >= 8 || classifyFailure(err).class !== 'transient') throw err;
        log.warn({ err, attempt }, `${what} not recorded yet; retried`);
        await new Promise((r) => setTimeout(r, backoffMs(attempt, WORKER_RETRY)));
      }
    }
  }

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

  async function recordFailed(m: Selectable<MessagesTable>, errors: unknown[]): Promise<void> {
    await persist('failed send', () =>
      db.transaction().execute(async (trx) => {
        await trx
          .updateTable('messages')
          .set({ send_state: 'failed', send_lease_until: null, next_attempt_at: null })
          .where('id', '=', m.id)
          .execute();
        await trx
          .insertInto('message_statuses')
          .values({
            wamid: statusKey(m),
            status: 'failed',
            timestamp: nowSeconds(),
            errors: JSON.stringify(errors),
          })
          .onConflict((oc) => oc.columns(['wamid', 'status']).doNothing())
          .execute();
      }),
    );
    await publishFailed(m, errors);
  }

  /** One network attempt for a queued send, under its lease. */
  async function attempt(id: string, ctx: DeliveryContext): Promise<Attempt> {
    const m = await db
      .updateTable('messages')
      .set({ send_lease_until: leaseUntil })
      .where('id', '=', id)
      .where('send_state', '=', 'queued')
      .where((eb) =>
        eb.or([eb('send_lease_until', 'is', null), eb('send_lease_until', '<=', sql<Date>`now()`)]),
      )
      .returningAll()
      .executeTakeFirst();
    if (!m) {
      const held = await db
        .selectFrom('messages')
        .select([
          'send_state',
          sql<number>`greatest(0, extract(epoch from (send_lease_until - now())) * 1000)::float8`.as(
            'left_ms',
          ),
        ])
        .where('id', '=', id)
        .executeTakeFirst();
      if (held?.send_state !== 'queued') return { kind: 'gone' };
      return { kind: 'busy', delayMs: clamp((held.left_ms ?? 0) + 100, 250, LEASE_SECONDS * 1000) };
    }
    const renew = setInterval(() => {
      ctx.working();
      db.updateTable('messages')
        .set({ send_lease_until: leaseUntil })
        .where('id', '=', id)
        .where('send_state', '=', 'queued')
        .execute()
        .catch(() => undefined);
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
          await db
            .updateTable('messages')
            .set({
              send_attempts: attempts,
              next_attempt_at: sql<Date>`now() + make_interval(secs => ${delayMs / 1000})`,
              send_lease_until: null,
            })
            .where('id', '=', id)
            .execute();
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
      // The network took it: losing this write would send it again.
      await persist('sent message', () =>
        db
          .updateTable('messages')
          .set({ wamid, send_state: 'sent', send_lease_until: null, next_attempt_at: null })
          .where('id', '=', id)
          .execute(),
      );
      return { kind: 'sent' };
    } finally {
      clearInterval(renew);
    }
  }

  async function deliver(id: string, ctx: DeliveryContext): Promise<Disposition | undefined> {
    const m = await db
      .selectFrom('messages')
      .select(['id', 'wa_id', 'send_state'])
      .where('id', '=', id)
      .executeTakeFirst();
    if (!m) return undefined;
    if (m.send_state === 'failed' && ctx.deliveryCount > 1) {
      // A redelivery: the failed status may not have been published before (JetStream drops
      // a second copy of the event).
      const status = await db
        .selectFrom('message_statuses')
        .select('errors')
        .where('wamid', '=', id)
        .where('status', '=', 'failed')
        .executeTakeFirst();
      const errors = Array.isArray(status?.errors) ? (status.errors as unknown[]) : [];
      await publishFailed(m, errors);
      return undefined;
    }
    if (m.send_state !== 'queued') return undefined;

    const head = await headOf(m.wa_id);
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

    const outcome = await attempt(m.id, ctx);
    ctx.span.setAttribute('switchboard.send_outcome', outcome.kind);
    if (outcome.kind === 'busy' || outcome.kind === 'retry') return { kind: 'nak', delayMs: outcome.delayMs };
    return undefined;
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
