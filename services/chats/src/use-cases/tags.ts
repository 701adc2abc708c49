import { isUniqueViolation } from '@switchboard/kit';
import {
  assertMayUseTags,
  type createTag as createContract,
  type deleteTag as deleteContract,
  type getTag as getContract,
  type listTags as listContract,
  ServiceError,
  type updateTag as updateContract,
} from '@switchboard/proto';
import { insertAuditEntry, withAuditEntry } from '../store/audit.ts';
import { insertTaggingEvent, removeTaggingsOfTag } from '../store/taggings.ts';
import { deleteTagRow, findTag, insertTag, pageTags, tagOf, updateTagRow } from '../store/tags.ts';
import { entityAuditEntry } from './audit-entries.ts';
import type { Db, RequestOf } from './types.ts';

const notFound = () => new ServiceError('not_found', 'No tag with this id.');

/** A unique violation of the tag name index becomes `tag_name_taken`; anything else goes on as it is. */
function rethrowNameTaken(err: unknown): never {
  if (isUniqueViolation(err, 'tags_name_key'))
    throw new ServiceError('tag_name_taken', undefined, { fields: { name: ['Another tag has this name.'] } });
  throw err;
}

export async function listTags(deps: { db: Db }, r: RequestOf<typeof listContract>) {
  assertMayUseTags(r.principal);
  const { count, rows } = await pageTags(deps.db, r);
  return { count, results: rows.map((t) => tagOf(t)) };
}

export async function getTag(deps: { db: Db }, r: RequestOf<typeof getContract>) {
  assertMayUseTags(r.principal);
  const row = await findTag(deps.db, r.id);
  if (!row) throw notFound();
  return tagOf(row);
}

export async function createTag(deps: { db: Db }, r: RequestOf<typeof createContract>) {
  assertMayUseTags(r.principal);
  try {
    const row = await withAuditEntry(
      deps.db,
      (trx) => insertTag(trx, r.tag),
      (tag) => entityAuditEntry(r.principal, 'tag.created', 'tag', tag.id, { name: tag.name }),
    );
    return tagOf(row);
  } catch (err) {
    rethrowNameTaken(err);
  }
}

export async function updateTag(deps: { db: Db }, r: RequestOf<typeof updateContract>) {
  assertMayUseTags(r.principal);
  try {
    const row = await withAuditEntry(
      deps.db,
      async (trx) => {
        const tag = await updateTagRow(trx, r.id, r.changes);
        if (!tag) throw notFound();
        return tag;
      },
      (tag) => entityAuditEntry(r.principal, 'tag.updated', 'tag', tag.id, { ...r.changes }),
    );
    return tagOf(row);
  } catch (err) {
    rethrowNameTaken(err);
  }
}

/** Deletes a tag with its taggings, each recorded as `removed` in the tagging history. */
export async function deleteTag(deps: { db: Db }, r: RequestOf<typeof deleteContract>) {
  assertMayUseTags(r.principal);
  await deps.db.transaction().execute(async (trx) => {
    const tag = await trx
      .selectFrom('tags')
      .selectAll()
      .where('id', '=', r.id)
      .forUpdate()
      .executeTakeFirst();
    if (!tag) throw notFound();
    const { chats, messages } = await removeTaggingsOfTag(trx, tag.id);
    const common = {
      action: 'removed' as const,
      tag_id: tag.id,
      tag_name: tag.name,
      user_id: r.principal.user_id,
    };
    for (const t of chats)
      await insertTaggingEvent(trx, { ...common, target: 'chat', wa_id: t.wa_id, message_id: null });
    for (const t of messages)
      await insertTaggingEvent(trx, {
        ...common,
        target: 'message',
        wa_id: t.wa_id,
        message_id: t.message_id,
      });
    await deleteTagRow(trx, tag.id);
    await insertAuditEntry(
      trx,
      entityAuditEntry(r.principal, 'tag.deleted', 'tag', tag.id, {
        name: tag.name,
        chat_taggings: chats.length,
        message_taggings: messages.length,
      }),
    );
  });
  return { deleted: true };
}
