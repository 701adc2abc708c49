import { type Kysely, sql } from 'kysely';
import type { ChatsDatabase } from '../db.ts';
import { ensureChat } from './chats.ts';

export interface ImportedRow {
  id: string;
  type: string;
  wabaPayload: unknown;
  fromUs: boolean;
  timestamp: number;
  /** Orders messages of one second as the export did (listing orders by time, then this). */
  createdAt: Date;
}

/** Rows per INSERT: 9 parameters each stay far below PostgreSQL's 65,535. */
const ROWS_PER_STATEMENT = 2000;

/**
 * Stores imported messages of one chat, creating its person and chat when missing, in one
 * transaction. A message whose id is already stored is skipped (re-imports add only what is
 * new); the chat's last activity moves forward, its care window does not (imported messages are
 * history, not a customer writing now). Answers how many were new.
 */
export async function insertImportedMessages(
  db: Kysely<ChatsDatabase>,
  waId: string,
  customerName: string | null,
  rows: readonly ImportedRow[],
): Promise<number> {
  return db.transaction().execute(async (trx) => {
    await ensureChat(trx, waId);
    if (customerName) {
      await trx
        .updateTable('persons')
        .set({ profile_name: customerName, updated_at: sql`now()` })
        .where('wa_id', '=', waId)
        .where('profile_name', '=', '')
        .execute();
    }
    let inserted = 0;
    for (let at = 0; at < rows.length; at += ROWS_PER_STATEMENT) {
      const chunk = rows.slice(at, at + ROWS_PER_STATEMENT);
      const result = await trx
        .insertInto('messages')
        .values(
          chunk.map((r) => ({
            id: r.id,
            wamid: null,
            wa_id: waId,
            from_us: r.fromUs,
            // History the business already handled on the phone: not waiting to be read.
            received: !r.fromUs,
            type: r.type,
            waba_payload: JSON.stringify(r.wabaPayload),
            sender_user_id: null,
            timestamp: r.timestamp,
            send_state: null,
            created_at: r.createdAt,
          })),
        )
        .onConflict((oc) => oc.column('id').doNothing())
        .returning('id')
        .execute();
      inserted += result.length;
    }
    const latest = rows.reduce((max, r) => Math.max(max, r.timestamp), 0);
    if (latest > 0) {
      await trx
        .updateTable('chats')
        .set({ last_message_at: sql<number>`greatest(last_message_at, ${latest})` })
        .where('wa_id', '=', waId)
        .execute();
    }
    return inserted;
  });
}
