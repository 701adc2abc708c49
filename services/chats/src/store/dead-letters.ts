import { randomUUID } from 'node:crypto';
import { pageRows } from '@switchboard/kit';
import {
  type AuditEntry,
  type InboundDeadLetter,
  type Principal,
  posixSeconds,
  posixSecondsOrNull,
  WaIdSchema,
} from '@switchboard/proto';
import type { Kysely, Selectable, Transaction } from 'kysely';
import type { ChatsDatabase, InboundDeadLettersTable } from '../db.ts';
import { storableText, storableValue } from '../domain/storable.ts';
import { insertAuditEntry } from './audit.ts';

type Db = Kysely<ChatsDatabase>;

export interface DeadLetterInput {
  streamSeq: number;
  receivedAt: number;
  signatureVerified: boolean;
  /** The body's bytes as received (or the whole stream message when it was not an envelope). */
  body: Uint8Array;
  waIds: readonly string[];
  error: string;
  errorCode: string | null;
  attempts: number;
  /** False for a stream message that was not a webhook envelope: there is no body to re-drive. */
  redrivable: boolean;
}

/**
 * The event-log entry of a dead letter. The log's target types have no "inbound body", so it
 * is filed under the chat of the first customer the body names (empty target id when it names
 * none); `action` and `details.dead_letter_id` identify it.
 */
function deadLetterAuditEntry(
  action: 'inbound.dead_lettered' | 'inbound.redriven',
  actor: Principal | null,
  row: {
    id: number;
    stream_seq: number;
    wa_ids: readonly string[];
    error: string;
    error_code: string | null;
  },
): AuditEntry {
  return {
    id: randomUUID(),
    action,
    actor: actor ? { user_id: actor.user_id, username: actor.username } : null,
    target_type: 'inbound',
    target_id: String(row.id),
    details: storableValue({
      dead_letter_id: row.id,
      stream_seq: row.stream_seq,
      wa_ids: row.wa_ids,
      error: row.error.slice(0, 1000),
      error_code: row.error_code,
    }) as Record<string, unknown>,
    at: Date.now(),
  };
}

/**
 * Keeps a body that can never be processed, with its error, and records it in the event log,
 * in one transaction. A redelivery of the same stream message finds it recorded and writes
 * nothing. Returns the dead letter's id, or null when it was recorded before.
 */
export async function recordDeadLetter(db: Db, d: DeadLetterInput): Promise<number | null> {
  return db.transaction().execute(async (trx: Transaction<ChatsDatabase>) => {
    const waIds = d.waIds.map(storableText);
    const error = storableText(d.error);
    const inserted = await trx
      .insertInto('inbound_dead_letters')
      .values({
        stream_seq: d.streamSeq,
        received_at: new Date(d.receivedAt),
        signature_verified: d.signatureVerified,
        body: Buffer.from(d.body),
        wa_ids: waIds,
        error,
        error_code: d.errorCode === null ? null : storableText(d.errorCode),
        attempts: d.attempts,
        redrivable: d.redrivable,
      })
      .onConflict((oc) => oc.column('stream_seq').doNothing())
      .returning('id')
      .executeTakeFirst();
    if (!inserted) return null;
    await insertAuditEntry(
      trx,
      deadLetterAuditEntry('inbound.dead_lettered', null, {
        id: inserted.id,
        stream_seq: d.streamSeq,
        wa_ids: waIds,
        error,
        error_code: d.errorCode,
      }),
    );
    return inserted.id;
  });
}

/** How much of a body a listing shows: a page of 100 must fit one NATS message. */
const BODY_PREVIEW_CHARS = 8 * 1024;
const ERROR_PREVIEW_CHARS = 2_000;

export function deadLetterView(row: Selectable<InboundDeadLettersTable>): InboundDeadLetter {
  const body = row.body.toString('utf8');
  const truncated = body.length > BODY_PREVIEW_CHARS;
  return {
    id: row.id,
    stream_seq: row.stream_seq,
    received_at: posixSeconds(row.received_at),
    signature_verified: row.signature_verified,
    // Read out of a body that could not be processed: what is not a wa_id is no customer.
    wa_ids: row.wa_ids.filter((w) => WaIdSchema.safeParse(w).success),
    body: truncated ? body.slice(0, BODY_PREVIEW_CHARS).toWellFormed() : body,
    body_bytes: row.body.length,
    body_truncated: truncated,
    error: row.error.slice(0, ERROR_PREVIEW_CHARS),
    error_code: row.error_code,
    attempts: row.attempts,
    created_at: posixSeconds(row.created_at),
    redriven_at: posixSecondsOrNull(row.redriven_at),
    redrivable: row.redrivable,
  };
}

/** A page of dead letters, newest first, optionally only those (not) re-driven. */
export async function deadLetterPage(
  db: Db,
  r: { redriven?: boolean | undefined; limit: number; offset: number },
): Promise<{ count: number; rows: Array<Selectable<InboundDeadLettersTable>> }> {
  let base = db.selectFrom('inbound_dead_letters');
  if (r.redriven !== undefined) base = base.where('redriven_at', r.redriven ? 'is not' : 'is', null);
  return pageRows(base, r, (q) => q.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc'));
}

export async function findDeadLetter(db: Db, id: number) {
  return db.selectFrom('inbound_dead_letters').selectAll().where('id', '=', id).executeTakeFirst();
}

/**
 * Marks a dead letter re-driven with its event-log entry, in one transaction; the row as it is
 * now (another re-drive may have marked it first).
 */
export async function markDeadLetterRedriven(
  db: Db,
  id: number,
  actor: Principal,
): Promise<Selectable<InboundDeadLettersTable>> {
  const updated = await db.transaction().execute(async (trx) => {
    const u = await trx
      .updateTable('inbound_dead_letters')
      .set({ redriven_at: new Date() })
      .where('id', '=', id)
      .where('redriven_at', 'is', null)
      .returningAll()
      .executeTakeFirst();
    if (u) await insertAuditEntry(trx, deadLetterAuditEntry('inbound.redriven', actor, u));
    return u;
  });
  return (
    updated ??
    (await db.selectFrom('inbound_dead_letters').selectAll().where('id', '=', id).executeTakeFirstOrThrow())
  );
}
