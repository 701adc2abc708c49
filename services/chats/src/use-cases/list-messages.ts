import type { listMessages as contract } from '@switchboard/proto';
import { hasMessageBefore, messagePage } from '../store/messages.ts';
import { messageRecords } from '../store/views.ts';
import { readableChat } from './chat-access.ts';
import type { Db, RequestOf } from './types.ts';

/** A page of one readable chat's messages (see `messagePage`), with whether older ones exist. */
export async function listMessages(deps: { db: Db }, r: RequestOf<typeof contract>) {
  const { db } = deps;
  const chat = await readableChat(db, r.principal, r.wa_id);
  const rows = await messagePage(db, r);
  const oldest = rows.at(-1);
  const older = oldest && (await hasMessageBefore(db, r.wa_id, oldest.timestamp));
  return {
    results: await messageRecords(db, rows, new Map([[chat.wa_id, chat]])),
    has_older: Boolean(older),
  };
}
