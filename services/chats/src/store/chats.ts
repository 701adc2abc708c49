import { pageRows } from '@switchboard/kit';
import type { ChatAccessSubject, ChatFiltersSchema, Principal } from '@switchboard/proto';
import { type ExpressionBuilder, type Kysely, type Selectable, sql, type Transaction } from 'kysely';
import type { z } from 'zod';
import type { ChatsDatabase, ChatsTable } from '../db.ts';
import { containsPattern } from '../domain/search.ts';

type ChatFilters = z.output<typeof ChatFiltersSchema>;

export function newChat(waId: string) {
  return {
    wa_id: waId,
    last_customer_message_at: null,
    customer_window_expires_at: null,
    network_window_expires_at: null,
    business_window_expires_at: null,
    assigned_to_user: null,
    assigned_group: null,
  };
}

/** Makes sure the customer has a person and a chat row (a first message in either direction creates them). */
export async function ensureChat(
  db: Kysely<ChatsDatabase> | Transaction<ChatsDatabase>,
  waId: string,
): Promise<void> {
  await db
    .insertInto('persons')
    .values({ wa_id: waId, profile_name: '' })
    .onConflict((oc) => oc.column('wa_id').doNothing())
    .execute();
  await db
    .insertInto('chats')
    .values(newChat(waId))
    .onConflict((oc) => oc.column('wa_id').doNothing())
    .execute();
}

/**
 * The permission-relevant facts of the given customers' chats, for events that leave chats:
 * a customer without a chat row yet counts as an unassigned chat.
 */
export async function chatAccessSubjects(
  db: Kysely<ChatsDatabase> | Transaction<ChatsDatabase>,
  waIds: readonly string[],
): Promise<ChatAccessSubject[]> {
  if (!waIds.length) return [];
  const rows = await db
    .selectFrom('chats')
    .select(['wa_id', 'assigned_to_user', 'assigned_group'])
    .where('wa_id', 'in', [...waIds])
    .execute();
  const byWaId = new Map(rows.map((r) => [r.wa_id, r]));
  return waIds.map((wa_id) => byWaId.get(wa_id) ?? { wa_id, assigned_to_user: null, assigned_group: null });
}

type Db = Kysely<ChatsDatabase>;
type Writer = Kysely<ChatsDatabase> | Transaction<ChatsDatabase>;

/** The chat of one customer, if it exists. */
export async function findChat(db: Db, waId: string): Promise<Selectable<ChatsTable> | undefined> {
  return db.selectFrom('chats').selectAll().where('wa_id', '=', waId).executeTakeFirst();
}

/** The chat of one customer, locked until the transaction ends: changes computed from it are not lost to a concurrent one. */
export async function lockChat(trx: Writer, waId: string): Promise<Selectable<ChatsTable> | undefined> {
  return trx.selectFrom('chats').selectAll().where('wa_id', '=', waId).forUpdate().executeTakeFirst();
}

/** The chat of one customer, which must exist. */
export async function getChatRow(db: Db, waId: string): Promise<Selectable<ChatsTable>> {
  return db.selectFrom('chats').selectAll().where('wa_id', '=', waId).executeTakeFirstOrThrow();
}

/** The SQL form of `canReadChat` for `assigned` access, on a query over `chats as c`. */
export function assignedToCaller(
  eb: ExpressionBuilder<ChatsDatabase & { c: ChatsTable }, 'c'>,
  p: Principal,
) {
  return eb.or([
    eb('c.assigned_to_user', '=', p.user_id),
    ...(p.group_ids.length ? [eb('c.assigned_group', 'in', p.group_ids)] : []),
    ...(p.assigned_wa_ids.length ? [eb('c.wa_id', 'in', p.assigned_wa_ids)] : []),
  ]);
}

/**
 * One page of the chats the caller may read that match the filters, most recently active
 * first, with the count of all that match.
 */
export async function pageReadableChats(
  db: Db,
  p: Principal,
  f: ChatFilters,
  page: { limit: number; offset: number },
): Promise<{ count: number; rows: Selectable<ChatsTable>[] }> {
  let q = db.selectFrom('chats as c').leftJoin('persons as p', 'p.wa_id', 'c.wa_id');
  if (p.permissions.can_read_chats === 'assigned') q = q.where((eb) => assignedToCaller(eb, p));
  if (f.resolved !== undefined) q = q.where('c.resolved', '=', f.resolved);
  if (f.assigned_to_user !== undefined) q = q.where('c.assigned_to_user', '=', f.assigned_to_user);
  if (f.assigned_group !== undefined) q = q.where('c.assigned_group', '=', f.assigned_group);
  if (f.search) {
    const like = containsPattern(f.search);
    q = q.where((eb) => eb.or([eb('c.wa_id', 'like', like), eb(sql`lower(p.profile_name)`, 'like', like)]));
  }
  if (f.tag !== undefined) {
    const tag = f.tag;
    const byId = /^\d{1,9}$/.test(tag) ? sql`or t.id = ${Number(tag)}` : sql``;
    q = q.where(
      sql<boolean>`exists (select 1 from chat_taggings ct join tags t on t.id = ct.tag_id
        where ct.wa_id = c.wa_id and (lower(t.name) = lower(${tag}) ${byId}))`,
    );
  }
  if (f.unread !== undefined) {
    const unread = sql<boolean>`exists (
      select 1 from messages m
      left join read_marks rm on rm.wa_id = m.wa_id and rm.user_id = ${p.user_id}
      where m.wa_id = c.wa_id and not m.from_us and m.wamid is not null
        and m.timestamp > coalesce(rm.read_until, 0))`;
    q = q.where(f.unread ? unread : sql<boolean>`not ${unread}`);
  }
  return pageRows(q, page, (q) => q.selectAll('c').orderBy('c.last_message_at', 'desc').orderBy('c.wa_id'));
}

/** Sets whether a chat is resolved. */
export async function updateChatResolved(db: Writer, waId: string, resolved: boolean): Promise<void> {
  await db.updateTable('chats').set({ resolved }).where('wa_id', '=', waId).execute();
}

/** Sets a chat's assignment, and reopens it when asked. */
export async function updateChatAssignment(
  db: Writer,
  waId: string,
  assignment: { assigned_to_user: number | null; assigned_group: number | null },
  reopen: boolean,
): Promise<void> {
  await db
    .updateTable('chats')
    .set({ ...assignment, ...(reopen && { resolved: false }) })
    .where('wa_id', '=', waId)
    .execute();
}
