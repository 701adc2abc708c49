/**
 * Accepting sends in one statement, alone and many at once, against a real PostgreSQL: what
 * the statement decides (permission, window, Idempotency-Key) and the order it stores in.
 */
import { randomUUID } from 'node:crypto';
import { canWriteChat, type Principal } from '@switchboard/proto';
import { expectPlannedOnce } from '@switchboard/testkit';
import { type Kysely, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatsDatabase } from '../src/db.ts';
import { createGroupCommit } from '../src/domain/group-commit.ts';
import { writeAccessMask } from '../src/domain/write-access-table.ts';
import { acceptSends, type SendToAccept } from '../src/store/accept-sends.ts';
import { openChatsDatabase } from './database.ts';

let db: Kysely<ChatsDatabase>;
let close: () => Promise<void>;
const NOW = 1_800_000_000;

beforeAll(async () => ({ db, close } = await openChatsDatabase('accept_sends')));
afterAll(() => close());

const agent = (over: Partial<Principal> = {}): Principal => ({
  user_id: 7,
  username: 'agent',
  role: 'user',
  group_ids: [3],
  permissions: { can_use_tags: true, can_read_chats: 'all', can_write_to_chats: 'assigned' },
  assigned_wa_ids: [],
  ...over,
});

async function chat(
  waId: string,
  c: { user?: number | null; group?: number | null; windowEnd?: number | null } = {},
): Promise<void> {
  await db.insertInto('persons').values({ wa_id: waId, profile_name: 'Grace' }).execute();
  await db
    .insertInto('chats')
    .values({
      wa_id: waId,
      assigned_to_user: c.user ?? null,
      assigned_group: c.group ?? null,
      customer_window_expires_at: c.windowEnd === undefined ? NOW + 3600 : c.windowEnd,
    })
    .execute();
}

function send(
  p: Principal,
  waId: string,
  over: { type?: string; key?: string; hash?: string } = {},
): SendToAccept {
  return {
    message: {
      id: randomUUID(),
      waId,
      type: over.type ?? 'text',
      wabaPayload: { to: waId, type: 'text', text: { body: 'hi' } },
      senderUserId: p.user_id,
      timestamp: NOW,
      idempotencyKey: over.key ?? null,
      requestHash: over.hash ?? 'h',
    },
    accessMask: writeAccessMask(p, waId),
    groupIds: p.group_ids,
  };
}

describe('acceptSends', () => {
  it('stores what canWriteChat allows for every assignment, and nothing else', async () => {
    const cases: Array<{ user: number | null; group: number | null }> = [];
    for (const user of [null, 7, 8]) for (const group of [null, 3, 4]) cases.push({ user, group });
    const p = agent();
    const waIds = cases.map((_, i) => `4917100000${String(i).padStart(2, '0')}`);
    for (const [i, c] of cases.entries()) await chat(waIds[i] as string, c);
    const out = await acceptSends(
      db,
      waIds.map((w) => send(p, w)),
    );
    out.forEach((o, i) => {
      const c = cases[i] as { user: number | null; group: number | null };
      const allowed = canWriteChat(p, {
        wa_id: waIds[i] as string,
        assigned_to_user: c.user,
        assigned_group: c.group,
      });
      expect({ i, stored: o.stored }).toEqual({ i, stored: allowed });
    });
  });

  it('stores no free-form message outside the window, but a template, which opens the business window', async () => {
    const p = agent({
      permissions: { can_use_tags: true, can_read_chats: 'all', can_write_to_chats: 'all' },
    });
    await chat('491710000100', { windowEnd: NOW - 1 });
    const [text, template] = await acceptSends(db, [
      send(p, '491710000100'),
      send(p, '491710000100', { type: 'template' }),
    ]);
    expect(text?.stored).toBe(false);
    expect(text?.chat?.customer_window_expires_at).toBe(NOW - 1);
    expect(template?.stored).toBe(true);
    expect(template?.updatedChat?.business_window_expires_at).toBe(NOW + 24 * 3600);
    expect(template?.updatedChat?.last_message_at).toBe(NOW);
  });

  it('answers a missing chat as missing and stores nothing for it', async () => {
    const [out] = await acceptSends(db, [send(agent(), '491710000199')]);
    expect(out).toMatchObject({ chat: undefined, stored: false, profileName: '' });
  });

  it('stores one message per Idempotency-Key, also when the key comes twice in one statement', async () => {
    const p = agent({
      permissions: { can_use_tags: true, can_read_chats: 'all', can_write_to_chats: 'all' },
    });
    await chat('491710000200');
    const out = await acceptSends(db, [
      send(p, '491710000200', { key: 'k1' }),
      send(p, '491710000200', { key: 'k1' }),
    ]);
    expect(out.map((o) => o.stored)).toEqual([true, false]);
    const again = await acceptSends(db, [send(p, '491710000200', { key: 'k1' })]);
    expect(again[0]?.stored).toBe(false);
  });

  it('keeps the order sends were accepted in when many are stored together', async () => {
    const p = agent({
      permissions: { can_use_tags: true, can_read_chats: 'all', can_write_to_chats: 'all' },
    });
    await chat('491710000300');
    await chat('491710000301');
    const commit = createGroupCommit((sends: readonly SendToAccept[]) => acceptSends(db, sends));
    const sends = Array.from({ length: 40 }, (_, i) => send(p, i % 2 ? '491710000300' : '491710000301'));
    const out = await Promise.all(sends.map((s) => commit.submit(s)));
    expect(out.every((o) => o.stored)).toBe(true);
    const stored = await sql<{ id: string }>`
      select id from messages where wa_id in ('491710000300', '491710000301') order by send_seq`.execute(db);
    expect(stored.rows.map((r) => r.id)).toEqual(sends.map((s) => s.message.id));
  });
  it('is planned once per connection, whatever the batch size, not on every execution', async () => {
    const p = agent({ permissions: { ...agent().permissions, can_write_to_chats: 'all' } });
    await chat('491710009900');
    await db.connection().execute(async (conn) => {
      for (const n of [1, 3, 1, 2, 1, 5, 1, 1, 4, 1, 1, 2])
        await acceptSends(
          conn,
          Array.from({ length: n }, () => send(p, '491710009900')),
        );
      await expectPlannedOnce(conn, '%with req as (%');
    });
  });
});
