import type { Principal } from '@switchboard/proto';
import { ServiceError } from '@switchboard/proto';
import { type Kysely, type Selectable, sql, type Transaction } from 'kysely';
import type { Audit, RightsChangedFn } from './audit.ts';
import type { GatewayDatabase, UsersTable } from './db.ts';
import { hashPassword, passwordProblems } from './passwords.ts';
import type { UserCreate, UserOut, UserUpdate } from './schemas.ts';

type Db = Kysely<GatewayDatabase>;
type UserRow = Selectable<UsersTable>;

export interface UsersDeps {
  db: Db;
  audit: Audit;
  /** Told after a change that can alter what the users may do or receive (caches drop them). */
  rightsChanged: RightsChangedFn;
  maxSeats: number;
}

/** The parts of a user that grant rights: nobody changes their own, only admins change roles. */
function rightsTouched(input: UserUpdate): string[] {
  const touched: string[] = [];
  if (input.profile?.role !== undefined) touched.push('profile.role');
  if (input.permissions !== undefined) touched.push('permissions');
  if (input.groups !== undefined) touched.push('groups');
  if (input.assigned_wa_ids !== undefined) touched.push('assigned_wa_ids');
  if (input.is_active !== undefined) touched.push('is_active');
  return touched;
}

function assertMayChangeRights(actor: Principal, target: UserRow, input: UserUpdate): void {
  const touched = rightsTouched(input);
  if (touched.length && actor.user_id === target.id) {
    throw new ServiceError(
      'cannot_change_own_rights',
      `You cannot change your own ${touched.join(', ')}; ask another admin.`,
    );
  }
  if (input.profile?.role !== undefined && input.profile.role !== target.role && actor.role !== 'admin') {
    throw new ServiceError('role_change_not_allowed', 'Only admins change the role of a user.');
  }
}

const SEAT_ROLES = ['admin', 'user'] as const;

async function groupsOf(db: Db | Transaction<GatewayDatabase>, userIds: number[]) {
  if (!userIds.length) return new Map<number, Array<{ id: number; name: string }>>();
  const rows = await db
    .selectFrom('user_groups')
    .innerJoin('groups', 'groups.id', 'user_groups.group_id')
    .select(['user_groups.user_id', 'groups.id', 'groups.name'])
    .where('user_groups.user_id', 'in', userIds)
    .orderBy('groups.name')
    .execute();
  const map = new Map<number, Array<{ id: number; name: string }>>();
  for (const r of rows) {
    const list = map.get(r.user_id) ?? [];
    list.push({ id: r.id, name: r.name });
    map.set(r.user_id, list);
  }
  return map;
}

export function toUserOut(u: UserRow, groups: Array<{ id: number; name: string }>): UserOut {
  return {
    id: u.id,
    username: u.username,
    first_name: u.first_name,
    last_name: u.last_name,
    email: u.email,
    profile: { role: u.role, is_available: u.is_available },
    groups,
    permissions: {
      can_use_tags: u.can_use_tags,
      can_read_chats: u.can_read_chats,
      can_write_to_chats: u.can_write_to_chats,
    },
    assigned_wa_ids: u.assigned_wa_ids,
    is_active: u.is_active,
  };
}

export function toPrincipal(u: UserRow, groupIds: number[]): Principal {
  return {
    user_id: u.id,
    username: u.username,
    role: u.role,
    group_ids: groupIds,
    permissions: {
      can_use_tags: u.can_use_tags,
      can_read_chats: u.can_read_chats,
      can_write_to_chats: u.can_write_to_chats,
    },
    assigned_wa_ids: u.assigned_wa_ids,
  };
}

/**
 * Serialises seat-taking changes: the count and the insert/update happen under one
 * transaction-scoped advisory lock, so two concurrent creates at the cap cannot both win.
 */
async function assertSeatAvailable(
  trx: Transaction<GatewayDatabase>,
  maxSeats: number,
  exceptUserId?: number,
) {
  await sql`select pg_advisory_xact_lock(hashtext('switchboard:seats'))`.execute(trx);
  let q = trx
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('is_active', '=', true)
    .where('role', 'in', [...SEAT_ROLES]);
  if (exceptUserId !== undefined) q = q.where('id', '<>', exceptUserId);
  const { n } = await q.executeTakeFirstOrThrow();
  if (Number(n) >= maxSeats) {
    throw new ServiceError(
      'seat_limit_reached',
      `All ${maxSeats} seats are taken. Deactivate a user or raise max_number_of_seats.`,
    );
  }
}

async function assertGroupsExist(trx: Transaction<GatewayDatabase>, ids: number[]) {
  if (!ids.length) return;
  const found = await trx.selectFrom('groups').select('id').where('id', 'in', ids).execute();
  const missing = ids.filter((id) => !found.some((g) => g.id === id));
  if (missing.length)
    throw ServiceError.validation({ groups: [`Unknown group id(s): ${missing.join(', ')}.`] });
}

function isUniqueViolation(err: unknown): boolean {
  return (err as { code?: string }).code === '23505';
}

export function createUsers(deps: UsersDeps) {
  const { db, audit, rightsChanged, maxSeats } = deps;

  async function get(id: number): Promise<UserOut> {
    const u = await db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
    if (!u) throw new ServiceError('not_found', 'No user with this id.');
    return toUserOut(u, (await groupsOf(db, [u.id])).get(u.id) ?? []);
  }

  async function list(limit: number, offset: number): Promise<{ count: number; results: UserOut[] }> {
    const { n } = await db
      .selectFrom('users')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    const rows = await db.selectFrom('users').selectAll().orderBy('id').limit(limit).offset(offset).execute();
    const groups = await groupsOf(
      db,
      rows.map((r) => r.id),
    );
    return { count: Number(n), results: rows.map((r) => toUserOut(r, groups.get(r.id) ?? [])) };
  }

  async function create(actor: Principal | null, input: UserCreate): Promise<UserOut> {
    if (input.password !== undefined) {
      const problems = passwordProblems(input.password, input);
      if (problems.length) throw ServiceError.validation({ password: problems });
    }
    const passwordHash = input.password !== undefined ? await hashPassword(input.password) : null;
    const role = input.profile?.role ?? 'user';
    let id: number;
    try {
      id = await db.transaction().execute(async (trx) => {
        await assertSeatAvailable(trx, maxSeats);
        await assertGroupsExist(trx, input.groups ?? []);
        const row = await trx
          .insertInto('users')
          .values({
            username: input.username,
            email: input.email ?? '',
            first_name: input.first_name ?? '',
            last_name: input.last_name ?? '',
            role,
            password_hash: passwordHash,
            is_available: input.profile?.is_available ?? true,
            can_use_tags: input.permissions?.can_use_tags ?? true,
            can_read_chats: input.permissions?.can_read_chats ?? 'all',
            can_write_to_chats: input.permissions?.can_write_to_chats ?? 'all',
            assigned_wa_ids: input.assigned_wa_ids ?? [],
          })
          .returning('id')
          .executeTakeFirstOrThrow();
        if (input.groups?.length) {
          await trx
            .insertInto('user_groups')
            .values([...new Set(input.groups)].map((group_id) => ({ user_id: row.id, group_id })))
            .execute();
        }
        await audit.record(
          trx,
          actor,
          'user.created',
          { type: 'user', id: row.id },
          { username: input.username, role },
        );
        return row.id;
      });
    } catch (err) {
      if (isUniqueViolation(err))
        throw ServiceError.validation({ username: ['A user with that username already exists.'] });
      throw err;
    }
    audit.committed();
    return get(id);
  }

  async function update(actor: Principal, id: number, input: UserUpdate): Promise<UserOut> {
    const current = await db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
    if (!current) throw new ServiceError('not_found', 'No user with this id.');
    if (current.role === 'configurator' && actor.user_id !== id) {
      throw new ServiceError(
        'configurator_protected',
        'The configurator user is managed by the partner provisioning.',
      );
    }
    assertMayChangeRights(actor, current, input);
    if (input.password !== undefined) {
      const problems = passwordProblems(input.password, {
        username: input.username ?? current.username,
        email: input.email ?? current.email,
      });
      if (problems.length) throw ServiceError.validation({ password: problems });
    }
    const passwordHash = input.password !== undefined ? await hashPassword(input.password) : undefined;
    const changed = Object.keys(input).filter((k) => k !== 'password');
    if (input.password !== undefined) changed.push('password');
    const action =
      input.is_active === true && !current.is_active
        ? 'user.reactivated'
        : input.is_active === false && current.is_active
          ? 'user.deactivated'
          : 'user.updated';
    const nextRole = input.profile?.role ?? current.role;
    const takesSeatAfter = (input.is_active ?? current.is_active) && nextRole !== 'configurator';
    const tookSeatBefore = current.is_active && current.role !== 'configurator';
    try {
      await db.transaction().execute(async (trx) => {
        if (takesSeatAfter && !tookSeatBefore) await assertSeatAvailable(trx, maxSeats, id);
        if (input.groups) await assertGroupsExist(trx, input.groups);
        await trx
          .updateTable('users')
          .set({
            ...(input.username !== undefined && { username: input.username }),
            ...(input.email !== undefined && { email: input.email }),
            ...(input.first_name !== undefined && { first_name: input.first_name }),
            ...(input.last_name !== undefined && { last_name: input.last_name }),
            ...(input.profile?.role !== undefined && { role: input.profile.role }),
            ...(input.profile?.is_available !== undefined && { is_available: input.profile.is_available }),
            ...(input.permissions?.can_use_tags !== undefined && {
              can_use_tags: input.permissions.can_use_tags,
            }),
            ...(input.permissions?.can_read_chats !== undefined && {
              can_read_chats: input.permissions.can_read_chats,
            }),
            ...(input.permissions?.can_write_to_chats !== undefined && {
              can_write_to_chats: input.permissions.can_write_to_chats,
            }),
            ...(input.assigned_wa_ids !== undefined && { assigned_wa_ids: input.assigned_wa_ids }),
            ...(input.is_active !== undefined && { is_active: input.is_active }),
            ...(passwordHash !== undefined && { password_hash: passwordHash }),
            updated_at: new Date(),
          })
          .where('id', '=', id)
          .execute();
        if (input.groups) {
          await trx.deleteFrom('user_groups').where('user_id', '=', id).execute();
          if (input.groups.length) {
            await trx
              .insertInto('user_groups')
              .values([...new Set(input.groups)].map((group_id) => ({ user_id: id, group_id })))
              .execute();
          }
        }
        // A new password or a deactivation ends every session of that user.
        if (passwordHash !== undefined || input.is_active === false) {
          await trx.deleteFrom('auth_tokens').where('user_id', '=', id).execute();
          await trx.deleteFrom('refresh_tokens').where('user_id', '=', id).execute();
        }
        await audit.record(trx, actor, action, { type: 'user', id }, { changed });
      });
    } catch (err) {
      if (isUniqueViolation(err))
        throw ServiceError.validation({ username: ['A user with that username already exists.'] });
      throw err;
    }
    audit.committed();
    if (rightsTouched(input).length) await rightsChanged([id]);
    return get(id);
  }

  /** Deleting deactivates: the seat is freed, sessions end, and past messages keep their sender. */
  async function deactivate(actor: Principal, id: number): Promise<void> {
    const current = await db
      .selectFrom('users')
      .select(['role', 'is_active'])
      .where('id', '=', id)
      .executeTakeFirst();
    if (!current) throw new ServiceError('not_found', 'No user with this id.');
    if (current.role === 'configurator') {
      throw new ServiceError(
        'configurator_protected',
        'The configurator user is managed by the partner provisioning.',
      );
    }
    if (actor.user_id === id)
      throw new ServiceError('cannot_delete_self', 'You cannot delete your own user.');
    if (!current.is_active) return;
    await update(actor, id, { is_active: false });
  }

  /** Users by id for expanding references (message senders, assignees); unknown ids are skipped. */
  async function byIds(ids: readonly number[]): Promise<Map<number, UserOut>> {
    const unique = [...new Set(ids)];
    if (!unique.length) return new Map();
    const rows = await db.selectFrom('users').selectAll().where('id', 'in', unique).execute();
    const groups = await groupsOf(
      db,
      rows.map((r) => r.id),
    );
    return new Map(rows.map((r) => [r.id, toUserOut(r, groups.get(r.id) ?? [])]));
  }

  /** The user's current rights, or null when unknown or deactivated (their webhooks receive nothing). */
  async function principalFor(id: number): Promise<Principal | null> {
    const u = await db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
    if (!u?.is_active) return null;
    const groups = (await groupsOf(db, [u.id])).get(u.id) ?? [];
    return toPrincipal(
      u,
      groups.map((g) => g.id),
    );
  }

  return { get, list, create, update, deactivate, byIds, principalFor };
}

export type Users = ReturnType<typeof createUsers>;
