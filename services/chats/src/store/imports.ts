import type { MessageMedia } from '@switchboard/proto';
import { type Kysely, sql, type Transaction } from 'kysely';
import type { ChatsDatabase } from '../db.ts';
import { ensureChat } from './chats.ts';

/** One imported message as the INSERT reads it (one JSON parameter: the names are the statement's). */
export interface ImportedRow {
  id: string;
  type: string;
  payload: unknown;
  /** The Message's `media` (`MessageMedia`): the imported file as the media service stored it. */
  media: MessageMedia | null;
  from_us: boolean;
  /** Epoch seconds of the message. */
  ts: number;
  /**
   * Creation time, epoch ms: orders messages of one second as the export did (listing orders by
   * time, then this).
   */
  created_ms: number;
}

/** Rows per INSERT: one JSON parameter per chunk, whatever the row count. */
const ROWS_PER_STATEMENT = 10_000;

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
  /** More writes of the import that must commit with its messages (files, the event log). */
  alongside?: (trx: Kysely<ChatsDatabase>, inserted: number) => Promise<void>,
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
      const slice = rows.slice(at, at + ROWS_PER_STATEMENT);
      const known = await storedIds(trx, waId, slice);
      const chunk = known.size === 0 ? slice : slice.filter((r) => !known.has(r.id));
      if (chunk.length === 0) continue;
      // The rows as one JSON parameter (jsonb_to_recordset): serialized natively in one call here
      // and parsed once by PostgreSQL, instead of escaping every element of per-column arrays.
      // Customer messages are history the business already handled on the phone: received.
      const result = await sql`
        insert into messages (id, wamid, wa_id, from_us, received, type, waba_payload, sender_user_id, timestamp,
                              send_state, created_at, media)
        select u.id, null, ${waId}, u.from_us, not u.from_us, u.type, u.payload, null, u.ts, null,
               timestamptz 'epoch' + u.created_ms * interval '1 millisecond', nullif(u.media, 'null'::jsonb)
        from jsonb_to_recordset(${JSON.stringify(chunk)}::jsonb)
          as u(id uuid, from_us boolean, type text, payload jsonb, ts bigint, created_ms bigint, media jsonb)
        on conflict (id) do nothing
      `.execute(trx);
      inserted += Number(result.numAffectedRows ?? 0n);
    }
    const latest = rows.reduce((max, r) => Math.max(max, r.ts), 0);
    if (latest > 0) {
      await trx
        .updateTable('chats')
        .set({ last_message_at: sql<number>`greatest(last_message_at, ${latest})` })
        .where('wa_id', '=', waId)
        .execute();
    }
    await alongside?.(trx, inserted);
    return inserted;
  });
}

/**
 * Which of these rows are stored already. A re-import (or the overlap of a later export) is
 * mostly stored: those rows are skipped before PostgreSQL builds their bodies (ON CONFLICT still
 * settles a concurrent import). A first import has nothing in its time span: one look at the
 * chat's time index says so, without looking up every id.
 */
async function storedIds(
  trx: Transaction<ChatsDatabase>,
  waId: string,
  rows: readonly ImportedRow[],
): Promise<Set<string>> {
  if (rows.length === 0) return new Set();
  let earliest = Number.POSITIVE_INFINITY;
  let latest = Number.NEGATIVE_INFINITY;
  for (const r of rows) {
    if (r.ts < earliest) earliest = r.ts;
    if (r.ts > latest) latest = r.ts;
  }
  const overlap = await sql<{ found: boolean }>`
    select exists (select 1 from messages where wa_id = ${waId} and timestamp between ${earliest} and ${latest}) as found
  `.execute(trx);
  if (!overlap.rows[0]?.found) return new Set();
  // The ids as one comma-separated text: pg would otherwise escape every element of an array.
  const ids = rows.map((r) => r.id).join(',');
  const stored = await sql<{ id: string }>`
    select id from messages where id = any(string_to_array(${ids}, ',')::uuid[])
  `.execute(trx);
  return new Set(stored.rows.map((r) => r.id));
}
