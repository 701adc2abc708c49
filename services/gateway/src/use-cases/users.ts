import { isUniqueViolation } from '@switchboard/kit';
import type { Principal } from '@switchboard/proto';
import { ServiceError } from '@switchboard/proto';
import type { Kysely, Selectable, Transaction } from 'kysely';
import type { Audit, RightsChangedFn } from '../adapters/audit.ts';
import { hashPassword } from '../adapters/password-hash.ts';
import { passwordProblems } from '../domain/passwords.ts';
import { assertMayChangeRights } from '../domain/rights.ts';
import type { UserCreate, UserOut, UserUpdate } from '../domain/schemas.ts';
import { assertSeatLeft, needsSeat } from '../domain/seats.ts';
import type { GatewayDatabase, UsersTable } from '../store/db.ts';
import {
  addUserGroups,
  endSessions,
  findUser,
  groupsOf,
  insertUser,
  listUsers,
  lockAndCountSeatsTaken,
  replaceUserGroups,
  unknownGroupIds,
  updateUser,
  usersByIds,
} from '../store/users.ts';

type Db = Kysely<GatewayDatabase>;
type UserRow = Selectable<UsersTable>;

export interface UsersDeps {
  db: Db;
  audit: Audit;
  /** Told after a change that can alter what the users may do or receive (caches drop them). */
  rightsChanged: RightsChangedFn;
  maxSeats: number;
  /**
   * How long `byIds` reuses a user's API object (message senders, assignees) without reading
   * it: every send answers with its sender, two queries the profiles showed on each send.
   * Changes through this process apply at once; through another gateway within this time.
   */
  referenceCacheTtlMs?: number;
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
  assertSeatLeft(await lockAndCountSeatsTaken(trx, exceptUserId), maxSeats);
}

async function assertGroupsExist(trx: Transaction<GatewayDatabase>, ids: number[]) {
  const missing = await unknownGroupIds(trx, ids);
  if (missing.length)
    throw ServiceError.validation({ groups: [`Unknown group id(s): ${missing.join(', ')}.`] });
}

export function createUsers(deps: UsersDeps) {
  const { db, audit, maxSeats } = deps;
  const references = new Map<number, { out: UserOut; expiresAt: number }>();
  // Counts forgets, so a read that started before one is not cached after it.
  let forgets = 0;
  const forget = (ids: readonly number[]) => {
    forgets++;
    if (!ids.length) references.clear();
    for (const id of ids) references.delete(id);
  };
  const rightsChanged: RightsChangedFn = async (ids) => {
    forget(ids);
    await deps.rightsChanged(ids);
  };

  async function get(id: number): Promise<UserOut> {
    const u = await findUser(db, id);
    if (!u) throw new ServiceError('not_found', 'No user with this id.');
    return toUserOut(u, (await groupsOf(db, [u.id])).get(u.id) ?? []);
  }

  async function list(limit: number, offset: number): Promise<{ count: number; results: UserOut[] }> {
    const { count, rows } = await listUsers(db, limit, offset);
    const groups = await groupsOf(
      db,
      rows.map((r) => r.id),
    );
    return { count, results: rows.map((r) => toUserOut(r, groups.get(r.id) ?? [])) };
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
        const userId = await insertUser(trx, {
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
        });
        await addUserGroups(trx, userId, input.groups ?? []);
        await audit.record(
          trx,
          actor,
          'user.created',
          { type: 'user', id: userId },
          { username: input.username, role },
        );
        return userId;
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
    const current = await findUser(db, id);
    if (!current) throw new ServiceError('not_found', 'No user with this id.');
    if (current.role === 'configurator' && actor.user_id !== id) {
      throw new ServiceError(
        'configurator_protected',
        'The configurator user is managed by the partner provisioning.',
      );
    }
    if (current.role === 'configurator' && (input.password !== undefined || input.username !== undefined)) {
      // It signs in only with the token the partner was given, and provisioning finds it by name.
      throw new ServiceError(
        'configurator_protected',
        'The configurator user has no password, and its username is managed by the partner provisioning.',
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
    const seatNeeded = needsSeat(current, {
      role: input.profile?.role ?? current.role,
      is_active: input.is_active ?? current.is_active,
    });
    try {
      await db.transaction().execute(async (trx) => {
        if (seatNeeded) await assertSeatAvailable(trx, maxSeats, id);
        if (input.groups) await assertGroupsExist(trx, input.groups);
        await updateUser(trx, id, {
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
        });
        if (input.groups) await replaceUserGroups(trx, id, input.groups);
        // A new password or a deactivation ends every session of that user.
        if (passwordHash !== undefined || input.is_active === false) await endSessions(trx, id);
        await audit.record(trx, actor, action, { type: 'user', id }, { changed });
      });
    } catch (err) {
      if (isUniqueViolation(err))
        throw ServiceError.validation({ username: ['A user with that username already exists.'] });
      throw err;
    }
    audit.committed();
    forget([id]);
    // Every change is announced: rights, ended sessions and the user's details alike live in
    // the caches of every gateway (principals, and the user objects answers are expanded with).
    await rightsChanged([id]);
    return get(id);
  }

  /** Deleting deactivates: the seat is freed, sessions end, and past messages keep their sender. */
  async function deactivate(actor: Principal, id: number): Promise<void> {
    const current = await findUser(db, id);
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
    const found = new Map<number, UserOut>();
    const now = Date.now();
    const missing = ids.filter((id) => {
      const cached = references.get(id);
      if (cached && cached.expiresAt > now) found.set(id, cached.out);
      return !found.has(id);
    });
    if (!missing.length) return found;
    const readAt = forgets;
    const rows = await usersByIds(db, missing);
    if (!rows.length) return found;
    const groups = await groupsOf(
      db,
      rows.map((r) => r.id),
    );
    const ttl = deps.referenceCacheTtlMs ?? 0;
    if (references.size > 10_000) references.clear();
    for (const r of rows) {
      const out = toUserOut(r, groups.get(r.id) ?? []);
      found.set(r.id, out);
      if (ttl > 0 && readAt === forgets) references.set(r.id, { out, expiresAt: now + ttl });
    }
    return found;
  }

  /** The user's current rights, or null when unknown or deactivated (their webhooks receive nothing). */
  async function principalFor(id: number): Promise<Principal | null> {
    const u = await findUser(db, id);
    if (!u?.is_active) return null;
    const groups = (await groupsOf(db, [u.id])).get(u.id) ?? [];
    return toPrincipal(
      u,
      groups.map((g) => g.id),
    );
  }

  return { get, list, create, update, deactivate, byIds, principalFor, forget };
}

export type Users = ReturnType<typeof createUsers>;
