import { assertMayMessage, type listPersons as contract, posixSeconds } from '@switchboard/proto';
import { pageReadablePersons } from '../store/persons.ts';
import type { Db, RequestOf } from './types.ts';

/** The customers whose chats the caller may read: visible exactly when their chat is. */
export async function listPersons(deps: { db: Db }, r: RequestOf<typeof contract>) {
  const p = r.principal;
  assertMayMessage(p);
  const { count, rows } = await pageReadablePersons(deps.db, p, r);
  return {
    count,
    results: rows.map((person) => ({
      wa_id: person.wa_id,
      profile_name: person.profile_name,
      first_seen_at: posixSeconds(person.first_seen_at),
    })),
  };
}
