import { pageRows } from '@switchboard/kit';
import type { Principal } from '@switchboard/proto';
import { type Kysely, type Selectable, sql } from 'kysely';
import type { ChatsDatabase, PersonsTable } from '../db.ts';
import { containsPattern } from '../domain/search.ts';
import { assignedToCaller } from './chats.ts';

/**
 * One page of the customers whose chats the caller may read (a customer is visible exactly
 * when their chat is), with the count of all that match: the one who wrote last first, or by
 * name in the contacts' order (`byName`, `contactOrderKey`), so a page of contacts merged from
 * them is a prefix of the whole.
 */
export async function pageReadablePersons(
  db: Kysely<ChatsDatabase>,
  p: Principal,
  r: { search?: string | undefined; limit: number; offset: number; byName?: boolean },
): Promise<{ count: number; rows: Selectable<PersonsTable>[] }> {
  let q = db.selectFrom('persons').innerJoin('chats as c', 'c.wa_id', 'persons.wa_id');
  if (p.permissions.can_read_chats === 'assigned') q = q.where((eb) => assignedToCaller(eb, p));
  if (r.search) {
    const like = containsPattern(r.search);
    q = q.where((eb) =>
      eb.or([eb('persons.wa_id', 'like', like), eb(sql`lower(persons.profile_name)`, 'like', like)]),
    );
  }
  return pageRows(q, r, (q) =>
    r.byName
      ? // Byte order ("C") of the name with ASCII letters lowered: what `contactOrderKey` compares.
        q
          .selectAll('persons')
          .orderBy(sql`lower(persons.profile_name collate "C")`)
          .orderBy(sql`persons.wa_id collate "C"`)
      : q
          .selectAll('persons')
          .orderBy(sql`c.last_customer_message_at desc nulls last`)
          .orderBy('persons.wa_id'),
  );
}
