import { type Kysely, sql } from 'kysely';
import type { ChatsDatabase } from '../db.ts';

type Db = Kysely<ChatsDatabase>;

/** Moves a user's read mark of a chat forward to `timestamp` (never back). */
export async function raiseReadMark(db: Db, userId: number, waId: string, timestamp: number): Promise<void> {
  await db
    .insertInto('read_marks')
    .values({ user_id: userId, wa_id: waId, read_until: timestamp })
    .onConflict((oc) =>
      oc.columns(['user_id', 'wa_id']).doUpdateSet({
        read_until: sql<number>`greatest(read_marks.read_until, excluded.read_until)`,
      }),
    )
    .execute();
}

/** Flags a chat's customer messages up to `timestamp` as received. */
export async function markCustomerMessagesReceived(db: Db, waId: string, timestamp: number): Promise<void> {
  await db
    .updateTable('messages')
    .set({ received: true })
    .where('wa_id', '=', waId)
    .where('from_us', '=', false)
    .where('timestamp', '<=', timestamp)
    .where('received', '=', false)
    .execute();
}

/** A user's read mark of a chat, which must exist. */
export async function readUntil(db: Db, userId: number, waId: string): Promise<number> {
  const mark = await db
    .selectFrom('read_marks')
    .select('read_until')
    .where((eb) => eb.and([eb('user_id', '=', userId), eb('wa_id', '=', waId)]))
    .executeTakeFirstOrThrow();
  return mark.read_until;
}

/** How many customer messages of a chat are newer than `after`. */
export async function countCustomerMessagesAfter(db: Db, waId: string, after: number): Promise<number> {
  const { n } = await db
    .selectFrom('messages')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('wa_id', '=', waId)
    .where('from_us', '=', false)
    .where('timestamp', '>', after)
    .executeTakeFirstOrThrow();
  return Number(n);
}
