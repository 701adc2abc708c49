import { type assignChat as contract, ServiceError } from '@switchboard/proto';
import { assignmentChange } from '../domain/assignment.ts';
import { assertMayWrite } from '../domain/chat-access.ts';
import { chatAuditEntry, insertAuditEntry } from '../store/audit.ts';
import { lockChat, updateChatAssignment } from '../store/chats.ts';
import { chatRecordOf, readableChat } from './chat-access.ts';
import type { Db, RequestOf } from './types.ts';

/**
 * Assigns a chat to a user and/or group (or clears it), reopening a resolved chat handed to
 * someone; the event-log entries are written in the same transaction.
 */
export async function assignChat(deps: { db: Db }, r: RequestOf<typeof contract>) {
  const { db } = deps;
  assertMayWrite(r.principal, r.wa_id, await readableChat(db, r.principal, r.wa_id));
  await db.transaction().execute(async (trx) => {
    // The change is computed from the locked row: two assignments at once (one of the user, one
    // of the group) both apply, and each entry names what it replaced.
    const chat = await lockChat(trx, r.wa_id);
    if (!chat) throw new ServiceError('not_found', 'No chat with this wa_id.');
    assertMayWrite(r.principal, r.wa_id, chat);
    const { next, changed, unassigned, reopen } = assignmentChange(chat, r);
    await updateChatAssignment(trx, r.wa_id, next, reopen);
    if (changed) {
      await insertAuditEntry(
        trx,
        chatAuditEntry(r.principal, unassigned ? 'chat.unassigned' : 'chat.assigned', r.wa_id, {
          assigned_to_user: next.assigned_to_user,
          assigned_group: next.assigned_group,
          previous_user: chat.assigned_to_user,
          previous_group: chat.assigned_group,
        }),
      );
    }
    if (reopen) {
      await insertAuditEntry(
        trx,
        chatAuditEntry(r.principal, 'chat.reopened', r.wa_id, { reason: 'assigned' }),
      );
    }
  });
  return chatRecordOf(db, r.wa_id, r.principal.user_id);
}
