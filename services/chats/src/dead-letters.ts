import { randomUUID } from 'node:crypto';
import type { Logger, Subscription } from '@switchboard/kit';
import {
  type AuditEntry,
  type Bus,
  type InboundDeadLetter,
  listInboundDeadLetters,
  type Principal,
  posixSeconds,
  posixSecondsOrNull,
  redriveInboundDeadLetter,
  ServiceError,
  WaIdSchema,
  wabaWebhookReceived,
} from '@switchboard/proto';
import type { Kysely, Selectable, Transaction } from 'kysely';
import type { ChatsDatabase, InboundDeadLettersTable } from './db.ts';
import { storableText, storableValue } from './domain/storable.ts';
import { insertAuditEntry } from './store/audit.ts';

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

function view(row: Selectable<InboundDeadLettersTable>): InboundDeadLetter {
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

function assertAdmin(p: Principal): void {
  if (p.role !== 'admin' && p.role !== 'configurator') {
    throw new ServiceError('permission_denied', 'Only admins may re-drive dead letters.');
  }
}

/**
 * `list_inbound_dead_letters` and `redrive_inbound_dead_letter`. A re-drive republishes the
 * body as received to the inbound stream (original receive time and signature flag), where it
 * is processed like any body: stored if the cause was fixed, dead-lettered again (a new entry)
 * if not. Re-driving twice publishes once: the dead letter remembers it was re-driven and the
 * publish carries a message id JetStream de-duplicates.
 */
export function startDeadLetterRpc(deps: { db: Db; bus: Bus; log: Logger }): Subscription[] {
  const { db, bus, log } = deps;
  const queue = { queue: 'chats' };
  return [
    bus.serve(
      listInboundDeadLetters,
      async (r) => {
        let base = db.selectFrom('inbound_dead_letters');
        if (r.redriven !== undefined) {
          base = base.where('redriven_at', r.redriven ? 'is not' : 'is', null);
        }
        const { n } = await base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
        const rows = await base
          .selectAll()
          .orderBy('created_at', 'desc')
          .orderBy('id', 'desc')
          .limit(r.limit)
          .offset(r.offset)
          .execute();
        return { count: Number(n), results: rows.map(view) };
      },
      queue,
    ),

    bus.serve(
      redriveInboundDeadLetter,
      async (r) => {
        assertAdmin(r.principal);
        const row = await db
          .selectFrom('inbound_dead_letters')
          .selectAll()
          .where('id', '=', r.id)
          .executeTakeFirst();
        if (!row) throw new ServiceError('not_found', 'No dead letter with this id.');
        if (!row.redrivable) {
          throw new ServiceError(
            'not_redrivable',
            'This stream message was not a network webhook; there is no body to re-drive.',
          );
        }
        if (row.redriven_at) return view(row);
        await bus.publish(
          wabaWebhookReceived,
          {
            received_at: row.received_at.getTime(),
            body: row.body.toString('utf8'),
            signature_verified: row.signature_verified,
          },
          { idempotencyKey: `redrive-${row.id}` },
        );
        const updated = await db.transaction().execute(async (trx) => {
          const u = await trx
            .updateTable('inbound_dead_letters')
            .set({ redriven_at: new Date() })
            .where('id', '=', row.id)
            .where('redriven_at', 'is', null)
            .returningAll()
            .executeTakeFirst();
          if (u) await insertAuditEntry(trx, deadLetterAuditEntry('inbound.redriven', r.principal, u));
          return u;
        });
        log.info({ dead_letter_id: row.id, stream_seq: row.stream_seq }, 'inbound dead letter re-driven');
        const current =
          updated ??
          (await db
            .selectFrom('inbound_dead_letters')
            .selectAll()
            .where('id', '=', row.id)
            .executeTakeFirstOrThrow());
        return view(current);
      },
      queue,
    ),
  ];
}
