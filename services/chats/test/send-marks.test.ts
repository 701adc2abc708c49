/**
 * Claiming and marking sends, many in one statement, against a real PostgreSQL: each answers
 * its own customer's queue head; only a head is claimed, once; a mark never answers a send
 * marked in the same statement.
 */
import { randomUUID } from 'node:crypto';
import { admin } from '@switchboard/testkit/tools';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatsDatabase } from '../src/db.ts';
import { writeAccessMask } from '../src/domain/write-access-table.ts';
import { acceptSends } from '../src/store/accept-sends.ts';
import { queuedMessageIdsOlderThan } from '../src/store/messages.ts';
import { recordSendsSent, scheduleSendRetry, sendStatesHeadsAndClaims } from '../src/store/sends.ts';
import { openChatsDatabase } from './database.ts';

let db: Kysely<ChatsDatabase>;
let close: () => Promise<void>;
const NOW = 1_800_000_000;

beforeAll(async () => ({ db, close } = await openChatsDatabase('send_marks')));
afterAll(() => close());

/** A customer with an open window and `n` queued sends, oldest first. */
async function queued(waId: string, n: number): Promise<string[]> {
  await db.insertInto('persons').values({ wa_id: waId, profile_name: 'Ada' }).execute();
  await db
    .insertInto('chats')
    .values({ wa_id: waId, customer_window_expires_at: NOW + 3600 })
    .execute();
  const ids = Array.from({ length: n }, () => randomUUID());
  await acceptSends(
    db,
    ids.map((id) => ({
      message: {
        id,
        waId,
        type: 'text',
        wabaPayload: { to: waId, type: 'text', text: { body: 'hi' } },
        senderUserId: 1,
        timestamp: NOW,
        idempotencyKey: null,
        requestHash: 'h',
      },
      accessMask: writeAccessMask(admin, waId),
      groupIds: [],
    })),
  );
  return ids;
}

const states = async (ids: string[]) =>
  Object.fromEntries(
    (
      await db.selectFrom('messages').select(['id', 'send_state', 'wamid']).where('id', 'in', ids).execute()
    ).map((r) => [r.id, [r.send_state, r.wamid]]),
  );

describe('recordSendsSent', () => {
  it("marks each send and answers its own customer's next queued send", async () => {
    const [a1, a2, a3] = await queued('491710000001', 3);
    const [b1] = await queued('491710000002', 1);
    if (!a1 || !a2 || !a3 || !b1) throw new Error('not queued');
    const unknown = randomUUID();
    const heads = await recordSendsSent(db, [
      { id: a1, wamid: 'wamid.a1' },
      { id: unknown, wamid: 'wamid.none' },
      { id: b1, wamid: 'wamid.b1' },
    ]);
    expect(heads.map((h) => h?.id)).toEqual([a2, undefined, undefined]);
    expect(heads[0]).toMatchObject({ leased: false });
    expect(await states([a1, a2, b1])).toEqual({
      [a1]: ['sent', 'wamid.a1'],
      [a2]: ['queued', null],
      [b1]: ['sent', 'wamid.b1'],
    });
    // Two of one customer in one statement: neither is the other's next.
    const both = await recordSendsSent(db, [
      { id: a2, wamid: 'wamid.a2' },
      { id: a3, wamid: null },
    ]);
    expect(both).toEqual([undefined, undefined]);
    expect(await states([a2, a3])).toEqual({ [a2]: ['sent', 'wamid.a2'], [a3]: ['sent', null] });
  });
});

describe('sendStatesHeadsAndClaims', () => {
  it("claims only each customer's head, once, and answers every send's head in the order given", async () => {
    const [a1, a2] = await queued('491710000003', 2);
    const [b1] = await queued('491710000004', 1);
    if (!a1 || !a2 || !b1) throw new Error('not queued');
    const unknown = randomUUID();
    const out = await sendStatesHeadsAndClaims(db, [a2, a1, unknown, b1], 30);
    expect(out.map((o) => o && [o.id, o.send_state, o.head?.id, o.claimed?.id ?? null])).toEqual([
      [a2, 'queued', a1, null],
      [a1, 'queued', a1, a1],
      undefined,
      [b1, 'queued', b1, b1],
    ]);
    expect(out[1]?.claimed).toMatchObject({ wa_id: '491710000003', send_attempts: 0 });
    // Claimed: the next claim finds the head leased and takes nothing.
    const again = await sendStatesHeadsAndClaims(db, [a1, a2], 30);
    expect(again.map((o) => [o?.head?.id, o?.head?.leased, o?.claimed ?? null])).toEqual([
      [a1, true, null],
      [a1, true, null],
    ]);
  });

  it('hands the claim of a send asked twice in one statement to its first asker only', async () => {
    const [a1] = await queued('491710000005', 1);
    if (!a1) throw new Error('not queued');
    const out = await sendStatesHeadsAndClaims(db, [a1, a1], 30);
    expect(out.map((o) => [o?.id, o?.head?.id, o?.claimed?.id ?? null])).toEqual([
      [a1, a1, a1],
      [a1, a1, null],
    ]);
  });
});

describe('queuedMessageIdsOlderThan (the re-queue of stranded sends)', () => {
  it('names only heads never taken: a send waiting behind one being retried is not re-queued', async () => {
    const [r1, r2] = await queued('491710000091', 2);
    const [s1, s2] = await queued('491710000092', 2);
    const [n1] = await queued('491710000093', 1);
    if (!r1 || !r2 || !s1 || !s2 || !n1) throw new Error('sends expected');
    // r1 is being retried by its worker: r2 waits for it on purpose.
    await scheduleSendRetry(db, r1, 1, 60_000);
    await db
      .updateTable('messages')
      .set({ created_at: new Date(Date.now() - 120_000) })
      .where('id', 'in', [r1, r2, s1, s2])
      .execute();
    const ids = await queuedMessageIdsOlderThan(db, 60);
    // s1 was never taken (its command lost): re-queued; s2 follows it once s1 is sent. n1 is new.
    expect(ids.filter((id) => [r1, r2, s1, s2, n1].includes(id))).toEqual([s1]);
  });
});
