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
