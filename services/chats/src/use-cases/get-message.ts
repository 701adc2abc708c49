import { assertMayMessage, type getMessage as contract, ServiceError } from '@switchboard/proto';
import { isUuid } from '../domain/message-id.ts';
import { findMessageByIdOrWamid } from '../store/messages.ts';
import { messageRecords } from '../store/views.ts';
import { readableChat } from './chat-access.ts';
import type { Db, RequestOf } from './types.ts';

/** One message, by its id or wamid, of a chat the caller may read. */
export async function getMessage(deps: { db: Db }, r: RequestOf<typeof contract>) {
  const { db } = deps;
  assertMayMessage(r.principal);
  const row = await findMessageByIdOrWamid(db, r.id, isUuid(r.id));
  if (!row) throw new ServiceError('not_found', 'No message with this id.');
  const chat = await readableChat(db, r.principal, row.wa_id);
  const [record] = await messageRecords(db, [row], new Map([[chat.wa_id, chat]]));
  if (!record) throw new ServiceError('not_found', 'No message with this id.');
  return record;
}
