import {
  assertMayTag,
  type createChatTagging as createChatContract,
  type createMessageTagging as createMessageContract,
  type deleteChatTagging as deleteChatContract,
  type deleteMessageTagging as deleteMessageContract,
  type listChatTaggings as listChatContract,
  type listTaggingEvents as listEventsContract,
  type listMessageTaggings as listMessageContract,
  type Principal,
  posixSeconds,
  ServiceError,
  type TaggingTarget,
} from '@switchboard/proto';
import { isUuid } from '../domain/message-id.ts';
import { chatAuditEntry, insertAuditEntry } from '../store/audit.ts';
import { findMessageByIdOrWamid } from '../store/messages.ts';
import {
  type ChatTaggingRow,
  deleteTagging,
  findChatTagging,
  findMessageTagging,
  insertChatTagging,
  insertMessageTagging,
  insertTaggingEvent,
  type MessageTaggingRow,
  pageChatTaggings,
  pageMessageTaggings,
  pageTaggingEvents,
} from '../store/taggings.ts';
import { findTag } from '../store/tags.ts';
import { readableChat } from './chat-access.ts';
import type { Db, RequestOf } from './types.ts';

const chatTaggingOf = (t: ChatTaggingRow) => ({
  id: t.id,
  chat: t.wa_id,
  tag: t.tag_id,
  created_by: t.created_by,
  created_at: posixSeconds(t.created_at),
});
const messageTaggingOf = (t: MessageTaggingRow) => ({
  id: t.id,
  message: t.message_id,
  tag: t.tag_id,
  created_by: t.created_by,
  created_at: posixSeconds(t.created_at),
});

async function existingTag(db: Db, id: number) {
  const tag = await findTag(db, id);
  if (!tag) throw ServiceError.validation({ tag: ['No tag with this id.'] });
  return tag;
}

/** A tag deleted while it was being attached (its foreign key is gone): as if it never existed. */
function tagGone(err: unknown): never {
  if ((err as { code?: string }).code === '23503')
    throw ServiceError.validation({ tag: ['No tag with this id.'] });
  throw err;
}

/**
 * What a tag added to or removed from a chat, or one of its messages (`message_id`), leaves
 * behind: an entry of the tagging history and one of the event log.
 */
async function recordTagging(
  trx: Db,
  p: Principal,
  action: 'added' | 'removed',
  tag: { id: number; name: string },
  on: { wa_id: string; message_id: string | null },
): Promise<void> {
  await insertTaggingEvent(trx, {
    target: on.message_id === null ? 'chat' : 'message',
    action,
    tag_id: tag.id,
    tag_name: tag.name,
    ...on,
    user_id: p.user_id,
  });
  const verb = action === 'added' ? 'tagged' : 'untagged';
  const details = { tag: tag.id, tag_name: tag.name };
  await insertAuditEntry(
    trx,
    on.message_id === null
      ? chatAuditEntry(p, `chat.${verb}`, on.wa_id, details)
      : {
          ...chatAuditEntry(p, `message.${verb}`, on.wa_id, { ...details, wa_id: on.wa_id }),
          target_type: 'message',
          target_id: on.message_id,
        },
  );
}

/** The message a client names by id or wamid, when it exists. */
async function messageNamed(db: Db, idOrWamid: string) {
  return findMessageByIdOrWamid(db, idOrWamid, isUuid(idOrWamid));
}

export async function listChatTaggings(deps: { db: Db }, r: RequestOf<typeof listChatContract>) {
  assertMayTag(r.principal);
  const { count, rows } = await pageChatTaggings(deps.db, r.principal, r, r);
  return { count, results: rows.map(chatTaggingOf) };
}

export async function createChatTagging(deps: { db: Db }, r: RequestOf<typeof createChatContract>) {
  const p = r.principal;
  assertMayTag(p);
  const { chat, tag: tagId } = r.tagging;
  await readableChat(deps.db, p, chat);
  const tag = await existingTag(deps.db, tagId);
  const row = await deps.db
    .transaction()
    .execute(async (trx) => {
      const created = await insertChatTagging(trx, { wa_id: chat, tag_id: tag.id, created_by: p.user_id });
      if (!created) throw new ServiceError('already_tagged', 'The chat already has this tag.');
      await recordTagging(trx, p, 'added', tag, { wa_id: chat, message_id: null });
      return created;
    })
    .catch(tagGone);
  return chatTaggingOf(row);
}

export async function listMessageTaggings(deps: { db: Db }, r: RequestOf<typeof listMessageContract>) {
  assertMayTag(r.principal);
  let message: string | undefined;
  if (r.message !== undefined) {
    const found = await messageNamed(deps.db, r.message);
    if (!found) return { count: 0, results: [] };
    message = found.id;
  }
  const { count, rows } = await pageMessageTaggings(deps.db, r.principal, { message, tag: r.tag }, r);
  return { count, results: rows.map(messageTaggingOf) };
}

export async function createMessageTagging(deps: { db: Db }, r: RequestOf<typeof createMessageContract>) {
  const p = r.principal;
  assertMayTag(p);
  const message = await messageNamed(deps.db, r.tagging.message);
  if (!message) throw ServiceError.validation({ message: ['No message with this id.'] });
  // A message of a chat the caller may not read does not exist for them.
  await readableChat(deps.db, p, message.wa_id).catch(() => {
    throw ServiceError.validation({ message: ['No message with this id.'] });
  });
  const tag = await existingTag(deps.db, r.tagging.tag);
  const row = await deps.db
    .transaction()
    .execute(async (trx) => {
      const created = await insertMessageTagging(trx, {
        message_id: message.id,
        wa_id: message.wa_id,
        tag_id: tag.id,
        created_by: p.user_id,
      });
      if (!created) throw new ServiceError('already_tagged', 'The message already has this tag.');
      await recordTagging(trx, p, 'added', tag, { wa_id: message.wa_id, message_id: message.id });
      return created;
    })
    .catch(tagGone);
  return messageTaggingOf(row);
}

async function removeTagging(
  db: Db,
  r: RequestOf<typeof deleteChatContract>,
  target: TaggingTarget,
): Promise<{ deleted: boolean }> {
  const p = r.principal;
  assertMayTag(p);
  const notFound = () => new ServiceError('not_found', 'No tagging with this id.');
  const found = target === 'chat' ? await findChatTagging(db, r.id) : await findMessageTagging(db, r.id);
  if (!found) throw notFound();
  await readableChat(db, p, found.wa_id).catch(() => {
    throw notFound();
  });
  const tag = await findTag(db, found.tag_id);
  const messageId: string | null = 'message_id' in found ? (found as MessageTaggingRow).message_id : null;
  await db.transaction().execute(async (trx) => {
    // A concurrent delete already recorded the removal.
    if (!(await deleteTagging(trx, target, found.id))) throw notFound();
    await recordTagging(
      trx,
      p,
      'removed',
      { id: found.tag_id, name: tag?.name ?? '' },
      { wa_id: found.wa_id, message_id: messageId },
    );
  });
  return { deleted: true };
}

export const deleteChatTagging = (deps: { db: Db }, r: RequestOf<typeof deleteChatContract>) =>
  removeTagging(deps.db, r, 'chat');
export const deleteMessageTagging = (deps: { db: Db }, r: RequestOf<typeof deleteMessageContract>) =>
  removeTagging(deps.db, r, 'message');

export async function listTaggingEvents(deps: { db: Db }, r: RequestOf<typeof listEventsContract>) {
  assertMayTag(r.principal);
  const filters = { ...r.filters };
  if (filters.message !== undefined) {
    const found = await messageNamed(deps.db, filters.message);
    if (!found) return { count: 0, results: [] };
    filters.message = found.id;
  }
  const { count, rows } = await pageTaggingEvents(deps.db, r.principal, r.target, filters, r);
  return {
    count,
    results: rows.map((e) => ({
      id: Number(e.id),
      action: e.action,
      tag: e.tag_id,
      tag_name: e.tag_name,
      chat: e.wa_id,
      message: e.message_id,
      user: e.user_id,
      created_at: posixSeconds(e.created_at),
    })),
  };
}
