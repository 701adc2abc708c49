import { assertMayMessage, type listChats as contract } from '@switchboard/proto';
import { pageReadableChats } from '../store/chats.ts';
import { chatRecords } from '../store/views.ts';
import type { Db, RequestOf } from './types.ts';

/** The chats the caller may read that match the filters, most recently active first. */
export async function listChats(deps: { db: Db }, r: RequestOf<typeof contract>) {
  const p = r.principal;
  assertMayMessage(p);
  const { count, rows } = await pageReadableChats(deps.db, p, r.filters, r);
  return { count, results: await chatRecords(deps.db, rows, p.user_id) };
}
