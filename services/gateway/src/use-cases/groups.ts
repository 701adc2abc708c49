import type { Principal } from '@switchboard/proto';
import { ServiceError } from '@switchboard/proto';
import type { Kysely } from 'kysely';
import type { Audit, RightsChangedFn } from './audit.ts';
import type { GatewayDatabase } from './db.ts';

function isUniqueViolation(err: unknown): boolean {
  return (err as { code?: string }).code === '23505';
}

export function createGroups(db: Kysely<GatewayDatabase>, audit: Audit, rightsChanged: RightsChangedFn) {
  async function get(id: number) {
    const g = await db.selectFrom('groups').select(['id', 'name']).where('id', '=', id).executeTakeFirst();
    if (!g) throw new ServiceError('not_found', 'No group with this id.');
    return g;
  }

  async function list(limit: number, offset: number) {
    const { n } = await db
      .selectFrom('groups')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    const results = await db
      .selectFrom('groups')
      .select(['id', 'name'])
      .orderBy('name')
      .limit(limit)
      .offset(offset)
      .execute();
    return { count: Number(n), results };
  }

  async function create(actor: Principal, name: string) {
    try {
      const g = await db.transaction().execute(async (trx) => {
        const created = await trx
          .insertInto('groups')
          .values({ name })
          .returning(['id', 'name'])
          .executeTakeFirstOrThrow();
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
        await trx.updateTable('groups').set({ name }).where('id', '=', id).execute();
        await audit.record(trx, actor, 'group.updated', { type: 'group', id }, { name });
      });
    } catch (err) {
      if (isUniqueViolation(err))
        throw ServiceError.validation({ name: ['A group with that name already exists.'] });
      throw err;
    }
    audit.committed();
    return get(id);
  }

  async function remove(actor: Principal, id: number) {
    const g = await get(id);
    await db.transaction().execute(async (trx) => {
      await trx.deleteFrom('groups').where('id', '=', id).execute();
      await audit.record(trx, actor, 'group.deleted', { type: 'group', id }, { name: g.name });
    });
    audit.committed();
    // Its members lose the chats assigned to it.
    await rightsChanged([]);
  }

  async function byIds(ids: readonly number[]): Promise<Map<number, { id: number; name: string }>> {
    const unique = [...new Set(ids)];
    if (!unique.length) return new Map();
    const rows = await db.selectFrom('groups').select(['id', 'name']).where('id', 'in', unique).execute();
    return new Map(rows.map((g) => [g.id, g]));
  }

  return { get, list, create, rename, remove, byIds };
}

export type Groups = ReturnType<typeof createGroups>;
