import type { updateChat as contract } from '@switchboard/proto';
import { assertMayWrite } from '../domain/chat-access.ts';
import { chatAuditEntry, insertAuditEntry } from '../store/audit.ts';
import { lockChat, updateChatResolved } from '../store/chats.ts';
import { chatRecordOf, readableChat } from './chat-access.ts';
import type { Db, RequestOf } from './types.ts';

/** Resolves or reopens a chat, with its event-log entry in the same transaction. */
export async function updateChat(deps: { db: Db }, r: RequestOf<typeof contract>) {
  const { db } = deps;
  assertMayWrite(r.principal, r.wa_id, await readableChat(db, r.principal, r.wa_id));
  await db.transaction().execute(async (trx) => {
    // Decided on the locked row: two resolves at once make one change and one entry.
    const chat = await lockChat(trx, r.wa_id);
    if (!chat || chat.resolved === r.resolved) return;
    await updateChatResolved(trx, r.wa_id, r.resolved);
    const action = r.resolved ? 'chat.resolved' : 'chat.reopened';
    await insertAuditEntry(trx, chatAuditEntry(r.principal, action, r.wa_id, {}));
  });
  return chatRecordOf(db, r.wa_id, r.principal.user_id);
}
