import { randomUUID } from 'node:crypto';
import { pageRows } from '@switchboard/kit';
import type { AuditEntry, Principal } from '@switchboard/proto';
import type { Kysely, Transaction } from 'kysely';
import type { ChatsDatabase } from '../db.ts';

/** Stores one event-log entry; the id makes a repeated entry (a redelivered command) a no-op. */
export async function insertAuditEntry(
  db: Kysely<ChatsDatabase> | Transaction<ChatsDatabase>,
  e: AuditEntry,
): Promise<void> {
  await db
    .insertInto('audit_logs')
    .values({
      id: e.id,
      action: e.action,
      actor_user_id: e.actor?.user_id ?? null,
      actor_username: e.actor?.username ?? null,
      target_type: e.target_type,
      target_id: e.target_id,
      details: JSON.stringify(e.details),
      at: new Date(e.at),
    })
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
}

/**
 * Makes a change and writes the event-log entry it leaves in one transaction, so that neither is
 * ever stored without the other; `entryOf` builds the entry from what the change returned.
 */
export function withAuditEntry<T>(
  db: Kysely<ChatsDatabase>,
  change: (trx: Transaction<ChatsDatabase>) => Promise<T>,
  entryOf: (result: T) => AuditEntry,
): Promise<T> {
  return db.transaction().execute(async (trx) => {
    const result = await change(trx);
    await insertAuditEntry(trx, entryOf(result));
    return result;
  });
}

/** A chat entry, written in the same transaction as the change it records. */
export function chatAuditEntry(
  actor: Principal | null,
  action: string,
  waId: string,
  details: Record<string, unknown>,
): AuditEntry {
  return {
    id: randomUUID(),
    action,
    actor: actor ? { user_id: actor.user_id, username: actor.username } : null,
    target_type: 'chat',
    target_id: waId,
    details,
    at: Date.now(),
  };
}

/** A page of the event log, newest first, filtered by target and action. */
export async function auditPage(
  db: Kysely<ChatsDatabase>,
  r: {
    target_type?: string | undefined;
    target_id?: string | undefined;
    action?: string | undefined;
    limit: number;
    offset: number;
  },
) {
  let base = db.selectFrom('audit_logs');
  if (r.target_type) base = base.where('target_type', '=', r.target_type);
  if (r.target_id) base = base.where('target_id', '=', r.target_id);
  if (r.action) base = base.where('action', '=', r.action);
  return pageRows(base, r, (q) => q.selectAll().orderBy('at', 'desc').orderBy('id', 'desc'));
}
