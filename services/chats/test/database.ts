import { createDb } from '@switchboard/kit';
import { freshDatabase } from '@switchboard/testkit';
import type { Kysely } from 'kysely';
import type { ChatsDatabase } from '../src/db.ts';

/** A fresh chats database of one test file and a pool on it; `close` ends the pool and drops the database. */
export async function openChatsDatabase(
  label: string,
): Promise<{ db: Kysely<ChatsDatabase>; close(): Promise<void> }> {
  const testDb = await freshDatabase(label);
  const db = createDb<ChatsDatabase>({
    url: testDb.url,
    applicationName: `${label.replaceAll('_', '-')}-test`,
  });
  return {
    db,
    async close() {
      await db.destroy();
      await testDb.drop();
    },
  };
}
