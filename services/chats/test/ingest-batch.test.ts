/**
 * Folding inbound bodies in batches (group commit) against a real PostgreSQL: what one
 * transaction for many bodies must keep of folding them one by one.
 */
import { expectPlannedOnce } from '@switchboard/testkit';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatsDatabase } from '../src/db.ts';
import { parseNetworkBody } from '../src/domain/network-body.ts';
import { storableJsonText } from '../src/domain/storable.ts';
import { foldNetworkWebhooks, type InboundBody } from '../src/store/ingest.ts';
import { createIngestBatcher } from '../src/workers/ingest-batcher.ts';
import { openChatsDatabase } from './database.ts';

let db: Kysely<ChatsDatabase>;
let close: () => Promise<void>;
let seq = 1;

beforeAll(async () => ({ db, close } = await openChatsDatabase('ingest_batch')));
afterAll(() => close());

/** A network webhook body with one customer message (`wamid`, second `ts`) or one status. */
function body(
  opts:
    | { waId: string; wamid: string; ts: number; name?: string }
    | { status: string; wamid: string; waId: string },
): InboundBody {
  const value =
    'status' in opts
      ? {
          statuses: [
            { id: opts.wamid, status: opts.status, timestamp: '1800000000', recipient_id: opts.waId },
          ],
        }
      : {
          contacts: [{ profile: { name: opts.name ?? 'Ada' }, wa_id: opts.waId }],
          messages: [
            {
              from: opts.waId,
              id: opts.wamid,
              timestamp: String(opts.ts),
              type: 'text',
              text: { body: opts.wamid },
            },
          ],
        };
  const raw = JSON.stringify({
    object: 'whatsapp_business_account',
    entry: [
      { id: 'waba', changes: [{ field: 'messages', value: { messaging_product: 'whatsapp', ...value } }] },
    ],
  });
  return {
    raw: { streamSeq: seq++, receivedAt: Date.now(), signatureVerified: true, body: raw, storableJson: raw },
    parsed: parseNetworkBody(raw),
    waIds: [opts.waId],
  };
}

/** A chat's messages in the order the API lists them (newest first), oldest first here. */
async function listed(waId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('messages')
    .select('wamid')
    .where('wa_id', '=', waId)
    .orderBy('timestamp', 'desc')
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
  return rows.map((r) => r.wamid ?? '').reverse();
}

describe('folding inbound bodies in batches', () => {
  it('keeps each customer’s stream order within one second, across customers in one batch', async () => {
    const bodies: InboundBody[] = [];
    // Interleaved customers, every message in the same second: only arrival order can order them.
    for (let i = 0; i < 30; i++) {
      bodies.push(body({ waId: '491511000001', wamid: `wamid.order.a${i}`, ts: 1_800_000_000 }));
      bodies.push(body({ waId: '491511000002', wamid: `wamid.order.b${i}`, ts: 1_800_000_000 }));
    }
    const folded = await foldNetworkWebhooks(db, bodies);
    expect(folded.every((f) => f.result !== 'already_stored' && f.result.storedMessages === 1)).toBe(true);
    expect(await listed('491511000001')).toEqual(Array.from({ length: 30 }, (_, i) => `wamid.order.a${i}`));
    expect(await listed('491511000002')).toEqual(Array.from({ length: 30 }, (_, i) => `wamid.order.b${i}`));
  });

  it('stores a redelivered batch once, and a wamid twice in one batch once', async () => {
    const first = body({ waId: '491511000003', wamid: 'wamid.once.1', ts: 1_800_000_100 });
    const again = { ...body({ waId: '491511000003', wamid: 'wamid.once.1', ts: 1_800_000_100 }) };
    const status = body({ status: 'delivered', wamid: 'wamid.once.1', waId: '491511000003' });
    const batch = [first, again, status];
    const once = await foldNetworkWebhooks(db, batch);
    expect(once.map((f) => (f.result === 'already_stored' ? 'already' : f.result.storedMessages))).toEqual([
      1, 0, 0,
    ]);
    const count = async () =>
      Number(
        (
          await db
            .selectFrom('messages')
            .select((eb) => eb.fn.countAll().as('n'))
            .where('wa_id', '=', '491511000003')
            .executeTakeFirstOrThrow()
        ).n,
      );
    const statuses = async () =>
      (await db.selectFrom('message_statuses').selectAll().where('wamid', '=', 'wamid.once.1').execute())
        .length;
    expect(await count()).toBe(1);
    expect(await statuses()).toBe(1);

    // The same stream messages again (a redelivery after a crash before the acks).
    const redelivered = await foldNetworkWebhooks(db, batch);
    expect(redelivered.every((f) => f.result === 'already_stored')).toBe(true);
    expect(await count()).toBe(1);
    expect(await statuses()).toBe(1);
    expect(redelivered[0]?.chats).toEqual([
      { wa_id: '491511000003', assigned_to_user: null, assigned_group: null },
    ]);
  });

  it('hands each body its customers’ chats with their assignment, with and without statuses', async () => {
    await foldNetworkWebhooks(db, [
      body({ waId: '491511000006', wamid: 'wamid.assign.0', ts: 1_800_000_400 }),
    ]);
    await db
      .updateTable('chats')
      .set({ assigned_to_user: 7, assigned_group: 3 })
      .where('wa_id', '=', '491511000006')
      .execute();
    const assigned = { wa_id: '491511000006', assigned_to_user: 7, assigned_group: 3 };
    const [message] = await foldNetworkWebhooks(db, [
      body({ waId: '491511000006', wamid: 'wamid.assign.1', ts: 1_800_000_401 }),
    ]);
    expect(message?.chats).toEqual([assigned]);
    const [status] = await foldNetworkWebhooks(db, [
      body({ status: 'read', wamid: 'wamid.assign.1', waId: '491511000006' }),
    ]);
    expect(status?.chats).toEqual([assigned]);
    const [unknown] = await foldNetworkWebhooks(db, [
      body({ status: 'read', wamid: 'wamid.assign.x', waId: '491511000007' }),
    ]);
    expect(unknown?.chats).toEqual([{ wa_id: '491511000007', assigned_to_user: null, assigned_group: null }]);
  });

  it('a redelivered older body does not bring back a name a later body replaced', async () => {
    const older = body({ waId: '491511000008', wamid: 'wamid.name.1', ts: 1_800_000_500, name: 'Old name' });
    const newer = body({ waId: '491511000008', wamid: 'wamid.name.2', ts: 1_800_000_501, name: 'New name' });
    await foldNetworkWebhooks(db, [older]);
    await foldNetworkWebhooks(db, [newer]);
    await foldNetworkWebhooks(db, [older]);
    const person = await db
      .selectFrom('persons')
      .select('profile_name')
      .where('wa_id', '=', '491511000008')
      .executeTakeFirstOrThrow();
    expect(person.profile_name).toBe('New name');
  });

  it('writes a person only when the name changes', async () => {
    const waId = '491511000009';
    const person = () =>
      db
        .selectFrom('persons')
        .select(['profile_name', 'updated_at'])
        .where('wa_id', '=', waId)
        .executeTakeFirstOrThrow();
    await foldNetworkWebhooks(db, [body({ waId, wamid: 'wamid.same.1', ts: 1_800_000_600, name: 'Grace' })]);
    const first = await person();
    await foldNetworkWebhooks(db, [body({ waId, wamid: 'wamid.same.2', ts: 1_800_000_601, name: 'Grace' })]);
    await foldNetworkWebhooks(db, [body({ waId, wamid: 'wamid.same.3', ts: 1_800_000_602, name: '' })]);
    expect(await person()).toEqual(first);
    await foldNetworkWebhooks(db, [
      body({ waId, wamid: 'wamid.same.4', ts: 1_800_000_603, name: 'Grace H.' }),
    ]);
    const renamed = await person();
    expect(renamed.profile_name).toBe('Grace H.');
    expect(renamed.updated_at.getTime()).toBeGreaterThan(first.updated_at.getTime());
  });

  it('stores bodies and names with the characters an array parameter escapes as they came', async () => {
    const name = 'Zoë "Q" \\ {a,b} NULL';
    const b = body({ waId: '491511000010', wamid: 'wamid.escape.1', ts: 1_800_000_700, name });
    const [folded] = await foldNetworkWebhooks(db, [
      b,
      body({ status: 'sent', wamid: 'wamid.escape.0', waId: '491511000010' }),
    ]);
    expect(folded?.result).toMatchObject({ storedMessages: 1 });
    const row = await db
      .selectFrom('network_webhooks')
      .select(['body', 'body_raw'])
      .where('stream_seq', '=', b.raw.streamSeq)
      .executeTakeFirstOrThrow();
    expect(row.body_raw?.toString('utf8')).toBe(b.raw.body);
    expect(row.body).toEqual(JSON.parse(b.raw.body));
    const person = await db
      .selectFrom('persons')
      .select('profile_name')
      .where('wa_id', '=', '491511000010')
      .executeTakeFirstOrThrow();
    expect(person.profile_name).toBe(name);
  });

  it("keeps every body's exact bytes, and its jsonb copy where it has one, in one batch", async () => {
    const stored = async (seq: number) =>
      db
        .selectFrom('network_webhooks')
        .select(['body', 'body_raw'])
        .where('stream_seq', '=', seq)
        .executeTakeFirstOrThrow();
    const inbound = (text: string): InboundBody => ({
      raw: {
        streamSeq: seq++,
        receivedAt: Date.now(),
        signatureVerified: false,
        body: text,
        storableJson: storableJsonText(text),
      },
      parsed: null,
      waIds: [],
    });
    const plain = inbound('{"object": "whatsapp_business_account", "a": [1, 2]}');
    // jsonb cannot hold these two escapes: its copy has U+FFFD, the bytes keep the escapes.
    const escaped = inbound('{"text": "nul \\u0000 and lone \\ud800"}');
    const notJson = inbound('not json at all');
    const withNul = inbound('bytes with a \0 in them');
    await foldNetworkWebhooks(db, [plain, escaped, notJson, withNul]);
    for (const b of [plain, escaped, notJson, withNul])
      expect((await stored(b.raw.streamSeq)).body_raw?.toString('utf8')).toBe(b.raw.body);
    expect((await stored(plain.raw.streamSeq)).body).toEqual(JSON.parse(plain.raw.body));
    expect((await stored(escaped.raw.streamSeq)).body).toEqual({ text: 'nul \uFFFD and lone \uFFFD' });
    expect((await stored(notJson.raw.streamSeq)).body).toBeNull();
    expect((await stored(withNul.raw.streamSeq)).body).toBeNull();
  });

  it('reopens a resolved chat once and moves its times to the greatest', async () => {
    await foldNetworkWebhooks(db, [body({ waId: '491511000004', wamid: 'wamid.re.0', ts: 1_800_000_200 })]);
    await db.updateTable('chats').set({ resolved: true }).where('wa_id', '=', '491511000004').execute();
    const folded = await foldNetworkWebhooks(db, [
      body({ waId: '491511000004', wamid: 'wamid.re.2', ts: 1_800_000_260 }),
      body({ waId: '491511000004', wamid: 'wamid.re.1', ts: 1_800_000_230 }),
    ]);
    expect(folded.map((f) => (f.result === 'already_stored' ? [] : f.result.reopened))).toEqual([
      ['491511000004'],
      [],
    ]);
    const chat = await db
      .selectFrom('chats')
      .selectAll()
      .where('wa_id', '=', '491511000004')
      .executeTakeFirstOrThrow();
    expect(chat.resolved).toBe(false);
    expect(chat.last_message_at).toBe(1_800_000_260);
    const reopenings = await db
      .selectFrom('audit_logs')
      .select('id')
      .where('action', '=', 'chat.reopened')
      .where('target_id', '=', '491511000004')
      .execute();
    expect(reopenings).toHaveLength(1);
  });

  it('is one prepared statement per shape of batch, whatever its size, not planned on every execution', async () => {
    await db.connection().execute(async (conn) => {
      let n = 0;
      for (const size of [1, 3, 1, 2, 1, 6, 1, 1, 4, 1, 2, 1])
        await foldNetworkWebhooks(
          conn,
          Array.from({ length: size }, () =>
            body({ status: 'delivered', wamid: `wamid.plan.${n++}`, waId: '491511000011' }),
          ),
        );
      await expectPlannedOnce(conn, '%insert into message_statuses%', '%insert into messages %');
    });
  });

  it('takes the network’s conversation window into chats, new in the batch or existing', async () => {
    const windowBody = (waId: string, expires: number): InboundBody => {
      const raw = JSON.stringify({
        object: 'whatsapp_business_account',
        entry: [
          {
            id: 'waba',
            changes: [
              {
                field: 'messages',
                value: {
                  messaging_product: 'whatsapp',
                  statuses: [
                    {
                      id: `wamid.window.${waId}`,
                      status: 'sent',
                      timestamp: '1800000000',
                      recipient_id: waId,
                      conversation: { id: 'c1', expiration_timestamp: String(expires) },
                    },
                  ],
                },
              },
            ],
          },
        ],
      });
      return {
        raw: {
          streamSeq: seq++,
          receivedAt: Date.now(),
          signatureVerified: true,
          body: raw,
          storableJson: raw,
        },
        parsed: parseNetworkBody(raw),
        waIds: [waId],
      };
    };
    // A customer new in this batch, whose chat gets its window in the same write as its message.
    await foldNetworkWebhooks(db, [
      body({ waId: '491511000026', wamid: 'wamid.window.m1', ts: 1_800_000_400 }),
      windowBody('491511000026', 1_800_090_000),
    ]);
    // An existing chat with a status alone; a smaller expiry later does not move it back.
    await foldNetworkWebhooks(db, [windowBody('491511000001', 1_800_080_000)]);
    await foldNetworkWebhooks(db, [windowBody('491511000001', 1_800_070_000)]);
    // A status for a customer without a chat creates none.
    await foldNetworkWebhooks(db, [windowBody('491511000027', 1_800_080_000)]);
    const chats = await db
      .selectFrom('chats')
      .select(['wa_id', 'network_window_expires_at', 'last_message_at'])
      .where('wa_id', 'in', ['491511000026', '491511000001', '491511000027'])
      .orderBy('wa_id')
      .execute();
    expect(chats).toMatchObject([
      { wa_id: '491511000001', network_window_expires_at: 1_800_080_000 },
      { wa_id: '491511000026', network_window_expires_at: 1_800_090_000, last_message_at: 1_800_000_400 },
    ]);
  });

  it('a body that fails its batch fails alone: the others are stored', async () => {
    const batcher = createIngestBatcher(db, { failFor: new Map([['491511000099', '22P02']]) });
    const good = Array.from({ length: 5 }, (_, i) =>
      body({ waId: '491511000005', wamid: `wamid.poison.ok${i}`, ts: 1_800_000_300 }),
    );
    const poison = body({ waId: '491511000099', wamid: 'wamid.poison.bad', ts: 1_800_000_300 });
    const outcomes = await Promise.allSettled(
      [...good.slice(0, 2), poison, ...good.slice(2)].map((b) => batcher.fold(b)),
    );
    expect(outcomes.map((o) => o.status)).toEqual([
      'fulfilled',
      'fulfilled',
      'rejected',
      'fulfilled',
      'fulfilled',
      'fulfilled',
    ]);
    expect(await listed('491511000005')).toEqual(Array.from({ length: 5 }, (_, i) => `wamid.poison.ok${i}`));
    expect(await listed('491511000099')).toEqual([]);
  });
});
