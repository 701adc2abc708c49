import {
  canWriteChat,
  type importChat as contract,
  type ImportedLine,
  isTimeZone,
  type Principal,
  ServiceError,
} from '@switchboard/proto';
import {
  createClock,
  decideCustomer,
  importedMedia,
  importedMessageId,
  importedPayload,
} from '../domain/chat-import.ts';
import { storableValue } from '../domain/storable.ts';
import { chatAuditEntry, insertAuditEntry } from '../store/audit.ts';
import { findChat } from '../store/chats.ts';
import { type ImportedRow, insertImportedMessages } from '../store/imports.ts';
import { attachImportedMedia } from '../store/media.ts';
import { chatRecordOf } from './chat-access.ts';
import type { WhatsappAccount } from './list-whatsapp-accounts.ts';
import type { Db, RequestOf } from './types.ts';

export interface ImportDeps {
  db: Db;
  account: WhatsappAccount;
}

const storableString = (s: string | null | undefined): boolean =>
  !s || (s.isWellFormed() && !s.includes('\u0000'));
const isStorable = (line: ImportedLine): boolean =>
  storableString(line.text) && storableString(line.media?.file_name) && storableString(line.media?.mime_type);

/** Admins and users who may write to the chat; a chat that does not exist yet counts as unassigned. */
async function assertMayImport(db: Db, p: Principal, waId: string): Promise<void> {
  if (p.role === 'configurator') throw new ServiceError('configurator_not_allowed');
  if (p.role === 'admin') return;
  const chat = await findChat(db, waId);
  const subject = chat ?? { wa_id: waId, assigned_to_user: null, assigned_group: null };
  if (!canWriteChat(p, subject))
    throw new ServiceError('permission_denied', 'You may not write to this chat.');
}

/**
 * One part of an exported chat's import (the gateway reads the export and sends its messages in
 * parts that fit on the bus). Every part decides the same customer from all senders, stores its
 * messages with ids derived from their content (so repeats are skipped) in the export's order,
 * and answers how many were new; the last part records the import in the event log and answers
 * the chat. Imported messages are neither fanned out nor delivered, and leave the care window
 * as it was.
 */
export async function importChat(deps: ImportDeps, r: RequestOf<typeof contract>) {
  const { db } = deps;
  if (r.time_zone !== undefined && !isTimeZone(r.time_zone)) {
    throw ServiceError.validation({ time_zone: ['Not an IANA time zone.'] });
  }
  const customer = decideCustomer(r.chat_participants, r.senders, deps.account.phone_number);
  await assertMayImport(db, r.principal, customer.waId);

  const clock = createClock(r.utc_offset_minutes, r.time_zone);
  const rows: ImportedRow[] = r.messages.map((line) => {
    const id = importedMessageId(customer.waId, line);
    const fromUs = !customer.isCustomer(line.sender, line.sender_number);
    const timestamp = clock(line.local_time);
    const { type, payload } = importedPayload(customer.waId, id, line, fromUs, timestamp);
    // What jsonb cannot hold (U+0000, unpaired surrogates) reads U+FFFD, as everywhere in chats.
    return {
      id,
      type,
      payload: isStorable(line) ? payload : storableValue(payload),
      media: importedMedia(line),
      from_us: fromUs,
      ts: timestamp,
      // Messages of one import keep the export's order within a second through their creation time.
      created_ms: r.created_base_ms + line.position,
    };
  });
  const last = r.part === r.parts - 1;
  const summary = r.summary;
  // The files, and for the last part the event-log entry, commit with the messages: a part
  // retried after a failure finds either all of it or none.
  const newMessages = await insertImportedMessages(
    db,
    customer.waId,
    customer.name,
    rows,
    async (trx, inserted) => {
      // Messages stored before without their file get it now (their rows were skipped above).
      await attachImportedMedia(trx, customer.waId, rows);
      if (!last) return;
      await insertAuditEntry(
        trx,
        chatAuditEntry(r.principal, 'chat.imported', customer.waId, {
          import_id: r.import_id,
          parts: r.parts,
          new_messages: (summary?.previous_new_messages ?? 0) + inserted,
          messages: summary?.messages ?? r.messages.length,
          system_lines: summary?.system_lines ?? 0,
          warnings: summary?.warnings ?? 0,
          device_language_code: r.device_language_code,
          utc_offset_minutes: r.utc_offset_minutes,
          ...(r.time_zone && { time_zone: r.time_zone }),
        }),
      );
    },
  );
  if (!last) return { wa_id: customer.waId, new_messages: newMessages, chat: null };
  return {
    wa_id: customer.waId,
    new_messages: newMessages,
    chat: await chatRecordOf(db, customer.waId, r.principal.user_id),
  };
}
