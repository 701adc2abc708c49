import { isUniqueViolation } from '@switchboard/kit';
import type { Principal } from '@switchboard/proto';
import { ServiceError } from '@switchboard/proto';
import type { Kysely } from 'kysely';
import type { Audit, RightsChangedFn } from '../adapters/audit.ts';
import type { GatewayDatabase } from '../store/db.ts';
import {
  deleteGroup,
  findGroup,
  groupsByIds,
  insertGroup,
  listGroups,
  renameGroup,
} from '../store/groups.ts';

export function createGroups(db: Kysely<GatewayDatabase>, audit: Audit, rightsChanged: RightsChangedFn) {
  async function get(id: number) {
    const g = await findGroup(db, id);
    if (!g) throw new ServiceError('not_found', 'No group with this id.');
    return g;
  }

  async function list(limit: number, offset: number) {
    return listGroups(db, limit, offset);
  }

  async function create(actor: Principal, name: string) {
    try {
      const g = await db.transaction().execute(async (trx) => {
        const created = await insertGroup(trx, name);
        await audit.record(trx, actor, 'group.created', { type: 'group', id: created.id }, { name });
        return created;
      });
      audit.committed();
      return g;
    } catch (err) {
      if (isUniqueViolation(err))
        throw ServiceError.validation({ name: ['A group with that name already exists.'] });
      throw err;
    }
  }

  async function rename(actor: Principal, id: number, name: string) {
    await get(id);
    try {
      await db.transaction().execute(async (trx) => {
        await renameGroup(trx, id, name);
        await audit.record(trx, actor, 'group.updated', { type: 'group', id }, { name });
      });
    } catch (err) {
      if (isUniqueViolation(err))
        throw ServiceError.validation({ name: ['A group with that name already exists.'] });
      throw err;
    }
    audit.committed();
    // Users' API objects name their groups: cached ones are dropped everywhere.
    await rightsChanged([]);
    return get(id);
  }

  async function remove(actor: Principal, id: number) {
    const g = await get(id);
    await db.transaction().execute(async (trx) => {
      await deleteGroup(trx, id);
      await audit.record(trx, actor, 'group.deleted', { type: 'group', id }, { name: g.name });
    });
    audit.committed();
    // Its members lose the chats assigned to it.
    await rightsChanged([]);
  }

  async function byIds(ids: readonly number[]): Promise<Map<number, { id: number; name: string }>> {
    const rows = await groupsByIds(db, ids);
    return new Map(rows.map((g) => [g.id, g]));
  }

  return { get, list, create, rename, remove, byIds };
}

export type Groups = ReturnType<typeof createGroups>;
