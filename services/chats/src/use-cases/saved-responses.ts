import {
  assertInboxUser,
  type createSavedResponse as createContract,
  type deleteSavedResponse as deleteContract,
  type getSavedResponse as getContract,
  type listSavedResponses as listContract,
  type Principal,
  posixSeconds,
  ServiceError,
  type updateSavedResponse as updateContract,
} from '@switchboard/proto';
import { withAuditEntry } from '../store/audit.ts';
import {
  deleteSavedResponseRow,
  findSavedResponse,
  insertSavedResponse,
  pageSavedResponses,
  type SavedResponseRow,
  updateSavedResponseRow,
} from '../store/saved-responses.ts';
import { entityAuditEntry } from './audit-entries.ts';
import type { Db, RequestOf } from './types.ts';

const savedResponseOf = (r: SavedResponseRow) => ({
  id: r.id,
  name: r.name,
  text: r.text,
  tags: r.tags,
  created_by: r.created_by,
  created_at: posixSeconds(r.created_at),
  updated_at: posixSeconds(r.updated_at),
});

const assertMayUse = assertInboxUser;

/** Admins edit every saved response, everyone else their own. */
async function editable(db: Db, p: Principal, id: number): Promise<SavedResponseRow> {
  assertMayUse(p);
  const row = await findSavedResponse(db, id);
  if (!row) throw new ServiceError('not_found', 'No saved response with this id.');
  if (p.role !== 'admin' && row.created_by !== p.user_id)
    throw new ServiceError('permission_denied', 'Only its author or an admin may change a saved response.');
  return row;
}

export async function listSavedResponses(deps: { db: Db }, r: RequestOf<typeof listContract>) {
  assertMayUse(r.principal);
  const { count, rows } = await pageSavedResponses(deps.db, r);
  return { count, results: rows.map(savedResponseOf) };
}

export async function getSavedResponse(deps: { db: Db }, r: RequestOf<typeof getContract>) {
  assertMayUse(r.principal);
  const row = await findSavedResponse(deps.db, r.id);
  if (!row) throw new ServiceError('not_found', 'No saved response with this id.');
  return savedResponseOf(row);
}

export async function createSavedResponse(deps: { db: Db }, r: RequestOf<typeof createContract>) {
  assertMayUse(r.principal);
  const row = await withAuditEntry(
    deps.db,
    (trx) => insertSavedResponse(trx, { ...r.response, created_by: r.principal.user_id }),
    (created) =>
      entityAuditEntry(r.principal, 'saved_response.created', 'saved_response', created.id, {
        name: created.name,
      }),
  );
  return savedResponseOf(row);
}

export async function updateSavedResponse(deps: { db: Db }, r: RequestOf<typeof updateContract>) {
  await editable(deps.db, r.principal, r.id);
  const row = await withAuditEntry(
    deps.db,
    async (trx) => {
      const updated = await updateSavedResponseRow(trx, r.id, r.changes);
      if (!updated) throw new ServiceError('not_found', 'No saved response with this id.');
      return updated;
    },
    () =>
      entityAuditEntry(r.principal, 'saved_response.updated', 'saved_response', r.id, {
        fields: Object.keys(r.changes),
      }),
  );
  return savedResponseOf(row);
}

export async function deleteSavedResponse(deps: { db: Db }, r: RequestOf<typeof deleteContract>) {
  const row = await editable(deps.db, r.principal, r.id);
  await withAuditEntry(
    deps.db,
    (trx) => deleteSavedResponseRow(trx, r.id),
    () => entityAuditEntry(r.principal, 'saved_response.deleted', 'saved_response', r.id, { name: row.name }),
  );
  return { deleted: true };
}
