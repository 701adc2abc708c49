import type { Logger } from '@switchboard/kit';
import {
  type listInboundDeadLetters as listContract,
  type Principal,
  type redriveInboundDeadLetter as redriveContract,
  ServiceError,
  wabaWebhookReceived,
} from '@switchboard/proto';
import type { Bus } from '@switchboard/proto/bus';
import {
  deadLetterPage,
  deadLetterView,
  findDeadLetter,
  markDeadLetterRedriven,
} from '../store/dead-letters.ts';
import type { Db, RequestOf } from './types.ts';

export interface DeadLetterDeps {
  db: Db;
  bus: Bus;
  log: Logger;
}

function assertAdmin(p: Principal): void {
  if (p.role !== 'admin' && p.role !== 'configurator') {
    throw new ServiceError('permission_denied', 'Only admins may re-drive dead letters.');
  }
}

/** `list_inbound_dead_letters`: newest first. */
export async function listInboundDeadLetters(deps: DeadLetterDeps, r: RequestOf<typeof listContract>) {
  const { count, rows } = await deadLetterPage(deps.db, r);
  return { count, results: rows.map(deadLetterView) };
}

/**
 * `redrive_inbound_dead_letter`: republishes the body as received to the inbound stream
 * (original receive time and signature flag), where it is processed like any body: stored if
 * the cause was fixed, dead-lettered again (a new entry) if not. Re-driving twice publishes
 * once: the dead letter remembers it was re-driven and the publish carries a message id
 * JetStream de-duplicates.
 */
export async function redriveInboundDeadLetter(deps: DeadLetterDeps, r: RequestOf<typeof redriveContract>) {
  assertAdmin(r.principal);
  const row = await findDeadLetter(deps.db, r.id);
  if (!row) throw new ServiceError('not_found', 'No dead letter with this id.');
  if (!row.redrivable) {
    throw new ServiceError(
      'not_redrivable',
      'This stream message was not a network webhook; there is no body to re-drive.',
    );
  }
  if (row.redriven_at) return deadLetterView(row);
  await deps.bus.publish(
    wabaWebhookReceived,
    {
      received_at: row.received_at.getTime(),
      body: row.body.toString('utf8'),
      signature_verified: row.signature_verified,
    },
    { idempotencyKey: `redrive-${row.id}` },
  );
  const current = await markDeadLetterRedriven(deps.db, row.id, r.principal);
  deps.log.info({ dead_letter_id: row.id, stream_seq: row.stream_seq }, 'inbound dead letter re-driven');
  return deadLetterView(current);
}
