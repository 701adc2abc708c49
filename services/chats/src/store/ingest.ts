import { randomUUID } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import type { ChatsDatabase } from '../db.ts';
import type { ParsedBody } from '../domain/network-body.ts';
import { customerWindowEnd } from '../domain/window.ts';
import { ensureChat } from './chats.ts';

export interface IngestResult {
  storedMessages: number;
  storedStatuses: number;
  /** Resolved chats a new customer message reopened. */
  reopened: string[];
}

/**
 * Stores one network webhook body in one transaction. Every write is idempotent (wamid and
 * (wamid, status) are unique) and every chat update is commutative (greatest of times), so
 * redeliveries and bodies processed out of order converge on the same state.
 */
export async function ingestNetworkBody(db: Kysely<ChatsDatabase>, body: ParsedBody): Promise<IngestResult> {
  return db.transaction().execute(async (trx) => {
    const result: IngestResult = { storedMessages: 0, storedStatuses: 0, reopened: [] };
    for (const c of body.contacts) {
      await trx
        .insertInto('persons')
        .values({ wa_id: c.wa_id, profile_name: c.name })
        .onConflict((oc) =>
          oc.column('wa_id').doUpdateSet({
            profile_name: (eb) =>
              eb.fn.coalesce(sql<string>`nullif(${c.name}, '')`, eb.ref('persons.profile_name')),
            updated_at: new Date(),
          }),
        )
        .execute();
    }
    for (const m of body.messages) {
      await ensureChat(trx, m.from);
      const inserted = await trx
        .insertInto('messages')
        .values({
          id: randomUUID(),
          wamid: m.wamid,
          wa_id: m.from,
          from_us: false,
          type: m.type,
          waba_payload: JSON.stringify(m.raw),
          sender_user_id: null,
          timestamp: m.timestamp,
          send_state: null,
          idempotency_key: null,
        })
        .onConflict((oc) => oc.column('wamid').doNothing())
        .returning('id')
        .executeTakeFirst();
      if (!inserted) continue;
      result.storedMessages++;
      const windowEnd = customerWindowEnd(m.timestamp, m.fromAd);
      const before = await trx
        .selectFrom('chats')
        .select('resolved')
        .where('wa_id', '=', m.from)
        .forUpdate()
        .executeTakeFirstOrThrow();
      await trx
        .updateTable('chats')
        .set({
          last_message_at: sql<number>`greatest(last_message_at, ${m.timestamp})`,
          last_customer_message_at: sql<number>`greatest(coalesce(last_customer_message_at, 0), ${m.timestamp})`,
          customer_window_expires_at: sql<number>`greatest(coalesce(customer_window_expires_at, 0), ${windowEnd})`,
          resolved: false,
        })
        .where('wa_id', '=', m.from)
        .execute();
      if (before.resolved) result.reopened.push(m.from);
    }
    for (const s of body.statuses) {
      const stored = await trx
        .insertInto('message_statuses')
        .values({
          wamid: s.wamid,
          status: s.status,
          timestamp: s.timestamp,
          errors: s.errors ? JSON.stringify(s.errors) : null,
        })
        .onConflict((oc) => oc.columns(['wamid', 'status']).doNothing())
        .returning('wamid')
        .executeTakeFirst();
      if (stored) result.storedStatuses++;
      if (s.conversationExpiresAt !== undefined) {
        await trx
          .updateTable('chats')
          .set({
            network_window_expires_at: sql<number>`greatest(coalesce(network_window_expires_at, 0), ${s.conversationExpiresAt})`,
          })
          .where('wa_id', '=', s.recipient)
          .execute();
      }
    }
    return result;
  });
}
