import type { getChat as contract } from '@switchboard/proto';
import { chatRecordOf, readableChat } from './chat-access.ts';
import type { Db, RequestOf } from './types.ts';

/** One chat the caller may read. */
export async function getChat(deps: { db: Db }, r: RequestOf<typeof contract>) {
  await readableChat(deps.db, r.principal, r.wa_id);
  return chatRecordOf(deps.db, r.wa_id, r.principal.user_id);
}
