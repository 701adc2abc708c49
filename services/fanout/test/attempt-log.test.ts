/**
 * The attempt log's batch insert against a real PostgreSQL: every column comes back as given
 * (times to the millisecond, NUL removed from text), and the statement is planned once per
 * connection whatever the batch size, not on every execution.
 */
import { randomUUID } from 'node:crypto';
import { createDb, migrate } from '@switchboard/kit';
import { expectPlannedOnce, freshDatabase } from '@switchboard/testkit';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FanoutDatabase, NewAttempt } from '../src/db.ts';
import { createFanoutMigrations } from '../src/migrations/index.ts';
import { insertAttempts } from '../src/store/attempt-log.ts';
import { testBox } from './helpers.ts';

let db: Kysely<FanoutDatabase>;
let drop: () => Promise<void>;

beforeAll(async () => {
  const database = await freshDatabase('fanout_attempt_log');
  db = createDb<FanoutDatabase>({ url: database.url, applicationName: 'attempt-log-test' });
  await migrate(db, 'fanout', createFanoutMigrations(testBox));
  drop = () => database.drop();
});
afterAll(async () => {
  await db.destroy();
  await drop();
});

const attempt = (webhookId: string, n: number, overrides: Partial<NewAttempt> = {}): NewAttempt => ({
  webhook_id: webhookId,
  event_id: `ev-${n}`,
  message_id: `msg_${n}`,
  attempt: 1,
  trigger: 'event',
  url: 'http://127.0.0.1:9/hook',
  success: true,
  status_code: 204,
  duration_ms: 3,
  error_class: null,
  error: null,
  response_excerpt: '',
  next_attempt_at: null,
  dead_lettered: false,
  attempted_at: new Date(1_800_000_000_123 + n),
  ...overrides,
});

describe('insertAttempts', () => {
  it('stores every column as given', async () => {
    const webhookId = randomUUID();
    await insertAttempts(db, [
      attempt(webhookId, 1),
      attempt(webhookId, 2, {
        attempt: 3,
        trigger: 'replay',
        success: false,
        status_code: null,
        error_class: 'timeout',
        error: 'no answer\0 in time',
        response_excerpt: null,
        next_attempt_at: new Date(1_800_000_060_789),
        dead_lettered: true,
      }),
    ]);
    const rows = await db
      .selectFrom('webhook_attempts')
      .selectAll()
      .where('webhook_id', '=', webhookId)
      .orderBy('id')
      .execute();
    expect(rows.map(({ id: _id, ...r }) => r)).toEqual([
      { ...attempt(webhookId, 1) },
      {
        ...attempt(webhookId, 2),
        attempt: 3,
        trigger: 'replay',
        success: false,
        status_code: null,
        error_class: 'timeout',
        error: 'no answer in time',
        response_excerpt: null,
        next_attempt_at: new Date(1_800_000_060_789),
        dead_lettered: true,
      },
    ]);
  });

  it('is planned once per connection, whatever the batch size, not on every execution', async () => {
    const webhookId = randomUUID();
    await db.connection().execute(async (conn) => {
      let n = 0;
      for (const size of [1, 3, 1, 2, 1, 5, 1, 1, 4, 1, 1, 2])
        await insertAttempts(
          conn,
          Array.from({ length: size }, () => attempt(webhookId, n++)),
        );
      await expectPlannedOnce(conn, '%insert into webhook_attempts%');
    });
  });
});
