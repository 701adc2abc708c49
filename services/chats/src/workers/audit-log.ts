import { randomUUID } from 'node:crypto';
import type { Logger } from '@switchboard/kit';
import { type AuditEntry, auditConsumer } from '@switchboard/proto';
import type { Bus, Consumption } from '@switchboard/proto/bus';
import type { Kysely, Transaction } from 'kysely';
import type { ChatsDatabase } from '../db.ts';
import { insertAuditEntry } from '../store/audit.ts';

/**
 * The instance's event log: entries of other services arrive as durable commands (ids make
 * the insert idempotent); chats writes its own in the transaction of the change.
 *
 * A `group.deleted` entry is also how chats learns that a group is gone (groups are the
 * gateway's): the chats assigned to it lose that assignment, each with its own entry, in the
 * entry's transaction, so a redelivery finds nothing left to change.
 */
export async function startAuditLogConsumer(deps: {
  bus: Bus;
  db: Kysely<ChatsDatabase>;
  log: Logger;
}): Promise<Consumption> {
  const { bus, db, log } = deps;
  return bus.consume(
    auditConsumer,
    async (e) => {
      await db.transaction().execute(async (trx) => {
        await insertAuditEntry(trx, e);
        if (e.action === 'group.deleted') {
          for (const entry of await unassignDeletedGroup(trx, e)) await insertAuditEntry(trx, entry);
        }
      });
      return undefined;
    },
    { onError: (err, at) => log.error({ err, ...at }, 'event-log entry not stored') },
  );
}

/** Clears a deleted group from the chats assigned to it; the entries that record it. */
async function unassignDeletedGroup(trx: Transaction<ChatsDatabase>, e: AuditEntry): Promise<AuditEntry[]> {
  const groupId = Number(e.target_id);
  if (!Number.isSafeInteger(groupId)) return [];
  const changed = await trx
    .updateTable('chats')
    .set({ assigned_group: null })
    .where('assigned_group', '=', groupId)
    .returning(['wa_id', 'assigned_to_user'])
    .execute();
  return changed.map((c) => ({
    id: randomUUID(),
    action: c.assigned_to_user === null ? 'chat.unassigned' : 'chat.assigned',
    actor: e.actor,
    target_type: 'chat',
    target_id: c.wa_id,
    details: {
      assigned_to_user: c.assigned_to_user,
      assigned_group: null,
      previous_user: c.assigned_to_user,
      previous_group: groupId,
      reason: 'group_deleted',
    },
    at: e.at,
  }));
}
