import { createHash } from 'node:crypto';
import { pageRows } from '@switchboard/kit';
import type { ExpressionBuilder, Kysely, Selectable } from 'kysely';
import { sql } from 'kysely';
import type { PushPlatform } from '../domain/push-tokens.ts';
import type { GatewayDatabase, PushTokensTable } from './db.ts';

type Db = Kysely<GatewayDatabase>;
export type PushTokenRow = Selectable<PushTokensTable>;

/** A user's own token: the id and its owner must both match, in every read and change. */
const ownToken = (userId: number, id: number) => (eb: ExpressionBuilder<GatewayDatabase, 'push_tokens'>) =>
  eb.and([eb('id', '=', id), eb('user_id', '=', userId)]);

export const tokenHash = (token: string): Buffer => createHash('sha256').update(token, 'utf8').digest();

export async function pageOwnPushTokens(
  db: Db,
  userId: number,
  page: { limit: number; offset: number },
): Promise<{ count: number; rows: PushTokenRow[] }> {
  const q = db.selectFrom('push_tokens').where('user_id', '=', userId);
  return pageRows(q, page, (q) => q.selectAll().orderBy('id'));
}

export async function findOwnPushToken(
  db: Db,
  userId: number,
  id: number,
): Promise<PushTokenRow | undefined> {
  return db.selectFrom('push_tokens').selectAll().where(ownToken(userId, id)).executeTakeFirst();
}

/**
 * Registers a token or registers it again: the same token is the same row (its owner becomes
 * whoever registers it now, `registered_at` is refreshed). `created` says which it was.
 */
export async function upsertPushToken(
  db: Db,
  t: {
    user_id: number;
    token: string;
    platform: PushPlatform;
    device_name?: string | undefined;
    enabled?: boolean | undefined;
  },
): Promise<{ row: PushTokenRow; created: boolean }> {
  const row = await db
    .insertInto('push_tokens')
    .values({
      user_id: t.user_id,
      token: t.token,
      token_hash: tokenHash(t.token),
      platform: t.platform,
      ...(t.device_name !== undefined && { device_name: t.device_name }),
      ...(t.enabled !== undefined && { enabled: t.enabled }),
      registered_at: new Date(),
    })
    .onConflict((oc) =>
      oc.column('token_hash').doUpdateSet({
        user_id: t.user_id,
        platform: t.platform,
        registered_at: new Date(),
        ...(t.device_name !== undefined && { device_name: t.device_name }),
        ...(t.enabled !== undefined && { enabled: t.enabled }),
      }),
    )
    .returningAll()
    .returning(sql<boolean>`(xmax = 0)`.as('inserted'))
    .executeTakeFirstOrThrow();
  const { inserted, ...rest } = row;
  return { row: rest, created: inserted };
}

export async function updateOwnPushToken(
  db: Db,
  userId: number,
  id: number,
  c: { device_name?: string | undefined; enabled?: boolean | undefined },
): Promise<PushTokenRow | undefined> {
  const changes = {
    ...(c.device_name !== undefined && { device_name: c.device_name }),
    ...(c.enabled !== undefined && { enabled: c.enabled }),
  };
  // An empty PATCH changes nothing (and an UPDATE without SET is no statement): the token as is.
  if (!Object.keys(changes).length) return findOwnPushToken(db, userId, id);
  return db
    .updateTable('push_tokens')
    .set(changes)
    .where(ownToken(userId, id))
    .returningAll()
    .executeTakeFirst();
}

export async function deleteOwnPushToken(db: Db, userId: number, id: number): Promise<boolean> {
  const res = await db.deleteFrom('push_tokens').where(ownToken(userId, id)).executeTakeFirst();
  return res.numDeletedRows > 0n;
}

/** Tokens that receive notifications: enabled, registered within the TTL, of active users. */
const liveTokensQuery = (db: Db, ttlDays: number) =>
  db
    .selectFrom('push_tokens as t')
    .innerJoin('users as u', 'u.id', 't.user_id')
    .where('t.enabled', '=', true)
    .where('u.is_active', '=', true)
    .where('t.registered_at', '>', new Date(Date.now() - ttlDays * 86_400_000));

export async function liveTokens(db: Db, ttlDays: number): Promise<PushTokenRow[]> {
  return liveTokensQuery(db, ttlDays).selectAll('t').execute();
}

export async function anyLiveToken(db: Db, ttlDays: number): Promise<boolean> {
  const row = await liveTokensQuery(db, ttlDays).select('t.id').limit(1).executeTakeFirst();
  return row !== undefined;
}

export async function deletePushTokenById(db: Db, id: number): Promise<void> {
  await db.deleteFrom('push_tokens').where('id', '=', id).execute();
}

export async function markPushTokenUsed(db: Db, id: number): Promise<void> {
  await db.updateTable('push_tokens').set({ last_used_at: new Date() }).where('id', '=', id).execute();
}
