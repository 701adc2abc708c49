import { randomUUID } from 'node:crypto';
import { isUniqueViolation, type Logger } from '@switchboard/kit';
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
import { createGroupCommit, type GroupCommit } from '../domain/group-commit.ts';
import { networkRequestOf, requestHash } from '../domain/send-request.ts';
import { windowExpiresAt } from '../domain/window.ts';
import { writeAccessMask } from '../domain/write-access-table.ts';
import { type AcceptedSend, acceptSends, type SendToAccept } from '../store/accept-sends.ts';
import {
  findSendByIdempotencyKey,
  getMessageRow,
  insertQueuedMessage,
  type QueuedMessage,
  queuedMessageIdsOlderThan,
} from '../store/messages.ts';
import { messageRecords, toMessageRecord } from '../store/views.ts';
import type { Db, RequestOf } from './types.ts';

export interface SendDeps {
  db: Db;
  bus: Bus;
  log: Logger;
  /** Accepts concurrent sends together (`createSendAcceptor`). */
  acceptor: SendAcceptor;
}

export type SendAcceptor = GroupCommit<SendToAccept, AcceptedSend>;

/** Sends that arrive while others are being stored are stored together, in one statement. */
export function createSendAcceptor(db: Db): SendAcceptor {
  return createGroupCommit((sends) => acceptSends(db, sends));
}

async function recordOf(db: Db, id: string): Promise<MessageRecord> {
  const row = await getMessageRow(db, id);
  const [record] = await messageRecords(db, [row]);
  if (!record) throw new Error(`message ${id} has no chat`);
  return record;
}

/** Hands a stored message to the delivery worker (a durable command, one per message). */
async function queue(deps: Pick<SendDeps, 'bus'>, id: string): Promise<void> {
  await deps.bus.publish(deliverMessage, { message_id: id }, { idempotencyKey: id });
}

/** Attempts at handing a stored message over before the periodic re-queue takes it up. */
const QUEUE_ATTEMPTS = 5;

/**
 * Hands a stored message to the delivery worker after the caller has its answer: the stored
 * row is what makes the 202 durable, and the command only wakes the worker. A command NATS
 * refuses is retried here a few times, and after that (or after a crash) the periodic
 * re-queue of sends stored but never taken (`requeueStranded`) hands it over.
 */
function queueSoon(deps: SendDeps, id: string): void {
  void (async () => {
    for (let attempt = 1; attempt <= QUEUE_ATTEMPTS; attempt++) {
      try {
        await queue(deps, id);
        return;
      } catch (err) {
        if (attempt === QUEUE_ATTEMPTS) {
          deps.log.warn(
            { err, message_id: id },
            'message stored but not queued yet; the periodic re-queue takes it',
          );
          return;
        }
        await new Promise((r) => setTimeout(r, 100 * 2 ** attempt));
      }
    }
  })();
}

function windowClosed(expires: number | null): ServiceError {
  return new ServiceError(
    'window_closed',
    'The customer care window is closed: only templates can be sent until the customer writes again.',
    { details: { messaging_window_expires_at: expires } },
  );
}

/**
 * Accepts a message for sending: checks permission and the care window, stores it as queued
 * and queues a durable delivery command. The caller's 202 means the message is stored and
 * will be delivered; the network is called by the delivery worker, never on this path.
 *
 * The common case (the chat exists, the sender may write, the window is open) is one
 * statement, shared with the sends that arrive meanwhile; everything else (errors, a reused
 * Idempotency-Key, a first template to a customer) is found out after it, from what it read.
 */
export async function send(
  deps: SendDeps,
  p: Principal,
  req: SendMessageRequest,
  idempotencyKey: string | undefined,
): Promise<MessageRecord> {
  const queued: QueuedMessage = {
    id: randomUUID(),
    waId: req.wa_id,
    type: req.type,
    wabaPayload: networkRequestOf(req),
    senderUserId: p.user_id,
    timestamp: nowSeconds(),
    idempotencyKey: idempotencyKey ?? null,
    requestHash: requestHash(req),
  };
  const accepted = await deps.acceptor.submit({
    message: queued,
    accessMask: writeAccessMask(p, req.wa_id),
    groupIds: p.group_ids,
  });
  if (accepted.stored && accepted.updatedChat) {
    queueSoon(deps, queued.id);
    return {
      ...newQueuedRecord(queued, accepted.updatedChat, accepted.profileName),
      chat_tags: accepted.chatTags,
    };
  }
  return sendNotStoredAtOnce(deps, p, queued, accepted);
}

/** Why the one statement did not store the message, answered as before it was one statement. */
async function sendNotStoredAtOnce(
  deps: SendDeps,
  p: Principal,
  queued: QueuedMessage,
  accepted: AcceptedSend,
): Promise<MessageRecord> {
  const { db } = deps;
  const { chat } = accepted;
  assertMayWrite(p, queued.waId, chat);

  if (queued.idempotencyKey) {
    const existing = await findSendByIdempotencyKey(db, p.user_id, queued.idempotencyKey);
    if (existing) {
      // Rows stored before request hashes were kept have none: they count as the same request.
      if (existing.request_hash !== null && existing.request_hash !== queued.requestHash) {
        throw new ServiceError(
          'idempotency_key_reused',
          'This Idempotency-Key was already used for a different message; use a new key for a new message.',
        );
      }
      // The first attempt may have stored the message but not queued it.
      if (existing.send_state === 'queued') queueSoon(deps, existing.id);
      return recordOf(db, existing.id);
    }
  }

  const expires = chat ? windowExpiresAt(chat) : null;
  if (queued.type !== 'template' && (expires === null || expires <= queued.timestamp))
    throw windowClosed(expires);
  if (chat) {
    // Allowed, open, and no earlier message with this key, yet not stored: the statement and
    // the rules disagree, which is a bug, never a reason to store anyway.
    throw new Error(`send to ${queued.waId} neither stored nor refused`);
  }

  // A first template to a customer: the person and chat are created with the message.
  try {
    await insertQueuedMessage(db, queued);
  } catch (err) {
    // The same Idempotency-Key raced in twice: the other request stored it.
    if (isUniqueViolation(err) && queued.idempotencyKey)
      return sendNotStoredAtOnce(deps, p, queued, accepted);
    throw err;
  }
  queueSoon(deps, queued.id);
  return recordOf(db, queued.id);
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
export async function requeueStranded(
  deps: Pick<SendDeps, 'db' | 'bus'>,
  olderThanSeconds = 60,
): Promise<number> {
  const ids = await queuedMessageIdsOlderThan(deps.db, olderThanSeconds);
  for (const id of ids) await queue(deps, id);
  return ids.length;
}
