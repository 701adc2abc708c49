/**
 * Deleting a tag while one of its taggings is being removed: the removal is in the history once.
 */
import { admin } from '@switchboard/testkit/tools';
import { type Kysely, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatsDatabase } from '../src/db.ts';
import { deleteTag } from '../src/use-cases/tags.ts';
import { openChatsDatabase } from './database.ts';

let db: Kysely<ChatsDatabase>;
let close: () => Promise<void>;

beforeAll(async () => ({ db, close } = await openChatsDatabase('tag_delete_race')));
afterAll(() => close());

describe('deleting a tag', () => {
  it('records the removal of a tagging once when an untagging of it commits meanwhile', async () => {
    const waId = '491710000301';
    await db.insertInto('persons').values({ wa_id: waId, profile_name: 'Ada' }).execute();
    await db.insertInto('chats').values({ wa_id: waId }).execute();
    const tag = await db
      .insertInto('tags')
      .values({ name: 'race', web_inbox_color: '#ffffff' })
      .returning('id')
      .executeTakeFirstOrThrow();
    const tagging = await db
      .insertInto('chat_taggings')
      .values({ wa_id: waId, tag_id: tag.id, created_by: admin.user_id })
      .returning('id')
      .executeTakeFirstOrThrow();

    // The untagging, as its request writes it, held open until the tag's delete waits for it.
    let release = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    let removedRow = () => {};
    const removed = new Promise<void>((r) => {
      removedRow = r;
    });
    const untagging = db.transaction().execute(async (trx) => {
      await trx.deleteFrom('chat_taggings').where('id', '=', tagging.id).execute();
      await trx
        .insertInto('tagging_events')
        .values({ target: 'chat', action: 'removed', tag_id: tag.id, tag_name: 'race', wa_id: waId })
        .execute();
      removedRow();
      await held;
    });
    await removed;
    const deleting = deleteTag({ db }, { principal: admin, id: tag.id });
    for (const deadline = Date.now() + 15_000; ; ) {
      const { rows } = await sql<{ n: number }>`
        select count(*)::int as n from pg_stat_activity where cardinality(pg_blocking_pids(pid)) > 0
          and datname = current_database()`.execute(db);
      if ((rows[0]?.n ?? 0) > 0) break;
      if (Date.now() > deadline) throw new Error('the delete never waited for the untagging');
      await new Promise((r) => setTimeout(r, 20));
    }
    release();
    await untagging;
    await deleting;

    const events = await db
      .selectFrom('tagging_events')
      .select('action')
      .where('wa_id', '=', waId)
      .where('tag_id', '=', tag.id)
      .execute();
    expect(events.map((e) => e.action)).toEqual(['removed']);
    expect(await db.selectFrom('tags').select('id').where('id', '=', tag.id).execute()).toEqual([]);
  });
});
