/**
 * The batch statements of the send and inbound paths find their rows by key even when planned
 * on a new inbox's nearly empty tables. Each statement is prepared once per connection and keeps
 * its first generic plan until the table is next analysed, so a plan that joins a batch with a
 * whole table by hash (the cheaper plan while the table is empty) goes on reading all of it as
 * it grows. Measured before this was fixed, under `bench/messaging/per-request.ts --phase send`:
 * the sent mark read 591 buffers per statement of about eight sends, growing with the table.
 */
import { randomUUID } from 'node:crypto';
import { messagesWebhookBody } from '@switchboard/proto';
import { admin } from '@switchboard/testkit/tools';
import { type Kysely, type RawBuilder, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatsDatabase } from '../src/db.ts';
import { parseNetworkBody } from '../src/domain/network-body.ts';
import { writeAccessMask } from '../src/domain/write-access-table.ts';
import { acceptSendsStatement } from '../src/store/accept-sends.ts';
import { foldStatement, type InboundBody } from '../src/store/ingest.ts';
import { claimStatement, sentMarkStatement } from '../src/store/sends.ts';
import { openChatsDatabase } from './database.ts';

let db: Kysely<ChatsDatabase>;
let close: () => Promise<void>;

beforeAll(async () => ({ db, close } = await openChatsDatabase('batch_plans')));
afterAll(() => close());

/** The generic plan PostgreSQL makes for a statement (what a prepared statement keeps). */
async function genericPlan(statement: RawBuilder<unknown>): Promise<string> {
  const { sql: text } = statement.compile(db);
  const result = await sql<{ 'QUERY PLAN': string }>`explain (generic_plan) ${sql.raw(text)}`.execute(db);
  return result.rows.map((r) => r['QUERY PLAN']).join('\n');
}

/** Every table the plan reads whole. */
const scannedWhole = (plan: string) => [...plan.matchAll(/Seq Scan on (\w+)/g)].map((m) => m[1]);

const ids = [randomUUID(), randomUUID()];
const waIds = ['491512000001', '491512000002'];

/**
 * A network body with a customer message and a status carrying the conversation's expiry, or
 * (`statusOnly`) the status alone, as each send brings back.
 */
function inbound(waId: string, seq: number, statusOnly = false): InboundBody {
  const raw = JSON.stringify(
    messagesWebhookBody(
      { wabaId: 'waba', displayPhoneNumber: '15550001234', phoneNumberId: '100000000000001' },
      {
        contacts: statusOnly ? [] : [{ profile: { name: 'Ada' }, wa_id: waId }],
        messages: statusOnly
          ? []
          : [
              {
                from: waId,
                id: `wamid.plan.${seq}`,
                timestamp: '1800000000',
                type: 'text',
                text: { body: 'hi' },
              },
            ],
        statuses: [
          {
            id: `wamid.plan.out.${seq}`,
            status: 'sent',
            timestamp: '1800000000',
            recipient_id: waId,
            conversation: { id: 'c', expiration_timestamp: '1800086400' },
          },
        ],
      },
    ),
  );
  return {
    raw: { streamSeq: seq, receivedAt: Date.now(), signatureVerified: true, body: raw, storableJson: raw },
    parsed: parseNetworkBody(raw),
    waIds: [waId],
  };
}

describe('plans of the batch statements on empty tables', () => {
  it('the sent mark reads messages by primary key', async () => {
    const plan = await genericPlan(sentMarkStatement(ids.map((id, i) => ({ id, wamid: `wamid.plan.${i}` }))));
    expect(scannedWhole(plan)).not.toContain('messages');
    expect(plan).toMatch(/Index Scan (using|on) messages_pkey/);
  });

  it('the claim reads messages by primary key', async () => {
    const plan = await genericPlan(claimStatement(ids, 30));
    expect(scannedWhole(plan)).not.toContain('messages');
    expect(plan).toMatch(/Index Scan (using|on) messages_pkey/);
  });

  it('the accept reads chats and persons by key', async () => {
    const plan = await genericPlan(
      acceptSendsStatement(
        waIds.map((waId, i) => ({
          message: {
            id: ids[i] ?? randomUUID(),
            waId,
            type: 'text',
            wabaPayload: { to: waId, type: 'text', text: { body: 'hi' } },
            senderUserId: 1,
            timestamp: 1_800_000_000,
            idempotencyKey: null,
            requestHash: 'h',
          },
          accessMask: writeAccessMask(admin, waId),
          groupIds: [],
        })),
      ),
    );
    expect(scannedWhole(plan)).not.toContain('chats');
    expect(scannedWhole(plan)).not.toContain('persons');
  });

  it('the fold of inbound bodies reads chats by key', async () => {
    const plan = await genericPlan(foldStatement(waIds.map((waId, i) => inbound(waId, i + 1))));
    expect(plan).toMatch(/Update on chats/);
    expect(scannedWhole(plan)).not.toContain('chats');
    expect(scannedWhole(plan)).not.toContain('messages');
  });

  it('the fold of statuses alone (what each send brings back) reads chats by key', async () => {
    const plan = await genericPlan(foldStatement(waIds.map((waId, i) => inbound(waId, i + 1, true))));
    // The network's conversation window moves forward on the chat: found by its key.
    expect(plan).toMatch(/Update on chats/);
    expect(scannedWhole(plan)).not.toContain('chats');
  });
});
