import { randomUUID } from 'node:crypto';
import type { Logger } from '@switchboard/kit';
import {
  type Bus,
  type Consumption,
  canReadChat,
  canWriteChat,
  deliverMessage,
  deliverMessageConsumer,
  type MessageRecord,
  messagesWebhookBody,
  type NetworkClient,
  NetworkError,
  networkEvent,
  type OutboundMessageInput,
  type Principal,
  RpcError,
  type SendMessageRequest,
} from '@switchboard/proto';
import { type Kysely, type Selectable, sql } from 'kysely';
import type { ChatsDatabase, ChatsTable } from './db.ts';
import { businessWindowEnd, windowExpiresAt } from './domain/window.ts';
import { ensureChat } from './store/chats.ts';
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

export function assertMayWrite(p: Principal, waId: string, chat: Selectable<ChatsTable> | undefined): void {
  if (p.role === 'configurator') {
    throw new RpcError(
      'configurator_not_allowed',
      403,
      'The configurator user cannot use messaging endpoints.',
    );
  }
  const subject = chat ?? { wa_id: waId, assigned_to_user: null, assigned_group: null };
  if (canWriteChat(p, subject)) return;
  if (!canReadChat(p, subject)) throw new RpcError('not_found', 404, 'No chat with this wa_id.');
  throw new RpcError('permission_denied', 403, 'You may not write to this chat.');
}

async function recordOf(db: Db, id: string): Promise<MessageRecord> {
  const row = await db.selectFrom('messages').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const [record] = await messageRecords(db, [row]);
  if (!record) throw new Error(`message ${id} has no chat`);
  return record;
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

  async function send(p: Principal, req: SendMessageRequest, idempotencyKey: string | undefined) {
    const chat = await db.selectFrom('chats').selectAll().where('wa_id', '=', req.wa_id).executeTakeFirst();
    assertMayWrite(p, req.wa_id, chat);

    if (idempotencyKey) {
      const existing = await db
        .selectFrom('messages')
        .select(['id', 'send_state'])
        .where('sender_user_id', '=', p.user_id)
        .where('idempotency_key', '=', idempotencyKey)
        .executeTakeFirst();
      if (existing) {
        // The first attempt may have stored the message but failed to queue it.
        if (existing.send_state === 'queued') await queue(existing.id);
        return recordOf(db, existing.id);
      }
    }

    const now = nowSeconds();
    if (req.type !== 'template') {
      const expires = chat ? windowExpiresAt(chat) : null;
      if (expires === null || expires <= now) {
        throw new RpcError(
          'window_closed',
          453,
          'The customer care window is closed: only templates can be sent until the customer writes again.',
          { messaging_window_expires_at: expires },
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
    await queue(id);
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

/** Delay before retrying a delivery the network could not take (outage, throttling). */
function redeliveryDelayMs(attempt: number, retryAfterMs: number | undefined): number {
  const backoff = Math.min(10 * 60_000, 2_000 * 2 ** Math.min(attempt - 1, 10));
  return Math.max(backoff, retryAfterMs ?? 0);
}

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

/**
 * The delivery worker: calls the network for each queued message. Throttling and outages are
 * retried (the message waits, it is never dropped); a rejection becomes a `failed` status
 * with the network's error, stored and fanned out.
 */
export async function startDeliveryWorker(deps: {
  db: Db;
  bus: Bus;
  log: Logger;
  network: NetworkClient;
  phoneNumber: string;
}): Promise<Consumption> {
  const { db, bus, log, network } = deps;
  return bus.consume(
    deliverMessageConsumer,
    async ({ message_id }, ctx) => {
      const m = await db.selectFrom('messages').selectAll().where('id', '=', message_id).executeTakeFirst();
      if (m?.send_state !== 'queued') return undefined;
      try {
        const res = await network.sendMessage(m.waba_payload as OutboundMessageInput);
        const wamid = res.messages[0]?.id ?? null;
        await db.updateTable('messages').set({ wamid, send_state: 'sent' }).where('id', '=', m.id).execute();
        return undefined;
      } catch (err) {
        if (!(err instanceof NetworkError)) throw err;
        if (err.retryable) {
          log.warn(
            { message_id, attempt: ctx.deliveryCount, code: err.code, kind: err.kind },
            'network unavailable; delivery retried',
          );
          return { kind: 'nak', delayMs: redeliveryDelayMs(ctx.deliveryCount, err.retryAfterMs) };
        }
        const errors = [
          {
            code: err.code ?? err.status ?? 0,
            title: err.message,
            message: err.message,
            error_data: { details: err.details ?? err.message },
          },
        ];
        await db.transaction().execute(async (trx) => {
          await trx.updateTable('messages').set({ send_state: 'failed' }).where('id', '=', m.id).execute();
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
        });
        const body = failedStatusBody(deps.phoneNumber, m.id, m.wa_id, errors);
        await bus.publish(
          networkEvent,
          { event_id: `failed-${m.id}`, kinds: ['status'], wa_ids: [m.wa_id], received_at: Date.now(), body },
          { idempotencyKey: `failed-${m.id}` },
        );
        return undefined;
      }
    },
    { onError: (err, at) => log.error({ err, ...at }, 'delivery failed') },
  );
}
