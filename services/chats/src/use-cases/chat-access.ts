import {
  assertMayMessage,
  type ChatRecord,
  canReadChat,
  type Principal,
  ServiceError,
} from '@switchboard/proto';
import type { Selectable } from 'kysely';
import type { ChatsTable } from '../db.ts';
import { findChat, getChatRow } from '../store/chats.ts';
import { chatRecords } from '../store/views.ts';
import type { Db } from './types.ts';

/** The chat the caller asks for, when they may read it; `not_found` otherwise. */
export async function readableChat(db: Db, p: Principal, waId: string): Promise<Selectable<ChatsTable>> {
  assertMayMessage(p);
  const chat = await findChat(db, waId);
  // Not readable and not existing look the same: an agent learns nothing about other chats.
  if (!chat || !canReadChat(p, chat)) throw new ServiceError('not_found', 'No chat with this wa_id.');
  return chat;
}

/** The chat as the caller sees it now (their new_messages), after any change. */
export async function chatRecordOf(db: Db, waId: string, userId: number): Promise<ChatRecord> {
  const row = await getChatRow(db, waId);
  const [record] = await chatRecords(db, [row], userId);
  if (!record) throw new ServiceError('not_found', 'No chat with this wa_id.');
  return record;
}
