import { randomUUID } from 'node:crypto';
import type { Logger } from '@switchboard/kit';
import {
  type sendMessage as contract,
  deliverMessage,
  type MessageRecord,
  type Principal,
  type SendMessageRequest,
  ServiceError,
} from '@switchboard/proto';
import type { Bus } from '@switchboard/proto/bus';
import { assertMayWrite } from '../domain/chat-access.ts';
import { nowSeconds } from '../domain/clock.ts';
import { networkRequestOf, requestHash } from '../domain/send-request.ts';
import { windowExpiresAt } from '../domain/window.ts';
import {
  findChatWithName,
  findSendByIdempotencyKey,
  getMessageRow,
  insertQueuedMessage,
  insertQueuedMessageIntoChat,
  type QueuedMessage,
  queuedMessageIdsOlderThan,
} from '../store/messages.ts';
import { chatTagsOf } from '../store/tags.ts';
import { messageRecords, toMessageRecord } from '../store/views.ts';
import type { Db, RequestOf } from './types.ts';

export interface SendDeps {
  db: Db;
  bus: Bus;
  log: Logger;
}

async function recordOf(db: Db, id: string): Promise<MessageRecord> {
  const row = await getMessageRow(db, id);
  const [record] = await messageRecords(db, [row]);
  if (!record) throw new Error(`message ${id} has no chat`);
  return record;
}

/** Hands a stored message to the delivery worker (a durable command, one per message). */
async function queue(deps: SendDeps, id: string): Promise<void> {
  await deps.bus.publish(deliverMessage, { message_id: id }, { idempotencyKey: id });
}

/**
 * Queues a stored message. When that fails the message is stored but its outcome unknown to
 * the caller: a 503 tells it to retry with the same Idempotency-Key, which finds the message
 * and queues it again (a message stored but never queued is also re-queued at start).
 */
async function queueStored(deps: SendDeps, id: string): Promise<void> {
  try {
    await queue(deps, id);
  } catch (err) {
    deps.log.warn({ err, message_id: id }, 'message stored but not queued');
    throw ServiceError.unavailable(
      'nats',
      'The message is stored but could not be queued for delivery; retry with the same Idempotency-Key.',
      { cause: err },
    );
  }
}

/**
 * Accepts a message for sending: checks permission and the care window, stores it as queued
 * and queues a durable delivery command. The caller's 202 means the message is stored and
 * will be delivered; the network is called by the delivery worker, never on this path.
 */
export async function send(
  deps: SendDeps,
  p: Principal,
  req: SendMessageRequest,
  idempotencyKey: string | undefined,
): Promise<MessageRecord> {
  const { db } = deps;
  const found = await findChatWithName(db, req.wa_id);
  const chat = found?.chat;
  assertMayWrite(p, req.wa_id, chat);

  const hash = requestHash(req);
  if (idempotencyKey) {
    const existing = await findSendByIdempotencyKey(db, p.user_id, idempotencyKey);
    if (existing) {
      // Rows stored before request hashes were kept have none: they count as the same request.
      if (existing.request_hash !== null && existing.request_hash !== hash) {
        throw new ServiceError(
          'idempotency_key_reused',
          'This Idempotency-Key was already used for a different message; use a new key for a new message.',
        );
      }
      // The first attempt may have stored the message but failed to queue it.
      if (existing.send_state === 'queued') await queueStored(deps, existing.id);
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

  const queued: QueuedMessage = {
    id: randomUUID(),
    waId: req.wa_id,
    type: req.type,
    wabaPayload: networkRequestOf(req),
    senderUserId: p.user_id,
    timestamp: now,
    idempotencyKey: idempotencyKey ?? null,
    requestHash: hash,
  };
  let record: MessageRecord | undefined;
  try {
    // The common case, a chat that exists, is one statement; a first template to a customer
    // creates the person and chat in a transaction.
    const updatedChat = found ? await insertQueuedMessageIntoChat(db, queued) : undefined;
    if (found && updatedChat) record = newQueuedRecord(queued, updatedChat, found.profileName);
    else await insertQueuedMessage(db, queued);
  } catch (err) {
    // The same Idempotency-Key raced in twice: the other request stored it.
    if ((err as { code?: string }).code === '23505' && idempotencyKey)
      return send(deps, p, req, idempotencyKey);
    throw err;
  }
  if (!record) {
    await queueStored(deps, queued.id);
    return recordOf(db, queued.id);
  }
  // The chat's tags are read while the command is published: no round trip of their own.
  const [, chatTags] = await Promise.all([queueStored(deps, queued.id), chatTagsOf(db, [queued.waId])]);
  return { ...record, chat_tags: chatTags.get(queued.waId) ?? [] };
}

/** The resource of a message just queued: what reading it back would answer, without the read. */
function newQueuedRecord(
  m: QueuedMessage,
  chat: Parameters<typeof toMessageRecord>[1],
  profileName: string,
): MessageRecord {
  return toMessageRecord(
    {
      id: m.id,
      wamid: null,
      type: m.type,
      // As jsonb gives it back.
      waba_payload: JSON.parse(JSON.stringify(m.wabaPayload)),
      from_us: true,
      received: false,
      sender_user_id: m.senderUserId,
      timestamp: m.timestamp,
      wa_id: m.waId,
      // Only customers' files are fetched into `media`; a send names its file in the payload.
      media: null,
    },
    chat,
    profileName,
    // No statuses, no tags yet; the chat's tags are added by the caller.
    [],
    [],
    [],
  );
}

/** The `send_message` request: `send` with the request's principal, message and key. */
export async function sendMessage(deps: SendDeps, r: RequestOf<typeof contract>): Promise<MessageRecord> {
  return send(deps, r.principal, r.message, r.idempotency_key);
}

/** Re-queues messages stored but never handed to the delivery worker (a crash between the two). */
export async function requeueStranded(deps: SendDeps, olderThanSeconds = 60): Promise<number> {
  const ids = await queuedMessageIdsOlderThan(deps.db, olderThanSeconds);
  for (const id of ids) await queue(deps, id);
  return ids.length;
}
