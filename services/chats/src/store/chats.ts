import type { ChatAccessSubject } from '@switchboard/proto';
import type { Kysely, Transaction } from 'kysely';
import type { ChatsDatabase } from '../db.ts';

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
