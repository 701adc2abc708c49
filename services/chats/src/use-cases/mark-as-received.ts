import type { markAsReceived as contract } from '@switchboard/proto';
import {
  countCustomerMessagesAfter,
  markCustomerMessagesReceived,
  raiseReadMark,
  readUntil,
} from '../store/read-marks.ts';
import { readableChat } from './chat-access.ts';
import type { Db, RequestOf } from './types.ts';

/** Moves the caller's read mark of a chat forward and flags those customer messages received. */
export async function markAsReceived(deps: { db: Db }, r: RequestOf<typeof contract>) {
  const { db } = deps;
  const userId = r.principal.user_id;
  await readableChat(db, r.principal, r.customer_wa_id);
  await raiseReadMark(db, userId, r.customer_wa_id, r.timestamp);
  await markCustomerMessagesReceived(db, r.customer_wa_id, r.timestamp);
  const until = await readUntil(db, userId, r.customer_wa_id);
  const n = await countCustomerMessagesAfter(db, r.customer_wa_id, until);
  return { customer_wa_id: r.customer_wa_id, timestamp: until, new_messages: n };
}
