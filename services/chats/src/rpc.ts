import type { Logger, Subscription } from '@switchboard/kit';
import {
  assertMayMessage,
  assignChat,
  type Bus,
  canReadChat,
  getChat,
  getMessage,
  listChats,
  listMessages,
  listPersons,
  listTemplates,
  listWhatsappAccounts,
  markAsReceived,
  type NetworkClient,
  type Principal,
  posixSeconds,
  ServiceError,
  sendMessage,
  updateChat,
} from '@switchboard/proto';
import { type ExpressionBuilder, type Kysely, type Selectable, sql } from 'kysely';
import type { ChatsDatabase, ChatsTable, MessagesTable } from './db.ts';
import { containsPattern } from './domain/search.ts';
import { assertMayWrite, createSender } from './send.ts';
import { chatAuditEntry, insertAuditEntry } from './store/audit.ts';
import { chatRecords, messageRecords } from './store/views.ts';

type Db = Kysely<ChatsDatabase>;

export interface RpcDeps {
  db: Db;
  bus: Bus;
  log: Logger;
  network: NetworkClient;
  account: { phone_number: string; provider_base_url: string; webhook_url: string | null };
  templateCacheSeconds: number;
}

async function readableChat(db: Db, p: Principal, waId: string): Promise<Selectable<ChatsTable>> {
  assertMayMessage(p);
  const chat = await db.selectFrom('chats').selectAll().where('wa_id', '=', waId).executeTakeFirst();
  // Not readable and not existing look the same: an agent learns nothing about other chats.
  if (!chat || !canReadChat(p, chat)) throw new ServiceError('not_found', 'No chat with this wa_id.');
  return chat;
}

/** The SQL form of `canReadChat` for `assigned` access, on a query over `chats as c`. */
function assignedToCaller(eb: ExpressionBuilder<ChatsDatabase & { c: ChatsTable }, 'c'>, p: Principal) {
  return eb.or([
    eb('c.assigned_to_user', '=', p.user_id),
    ...(p.group_ids.length ? [eb('c.assigned_group', 'in', p.group_ids)] : []),
    ...(p.assigned_wa_ids.length ? [eb('c.wa_id', 'in', p.assigned_wa_ids)] : []),
  ]);
}

/** Most messages of one second a page takes when the whole page is that second. */
const SAME_SECOND_MAX = 1000;

/**
 * A page of one chat's messages that never ends inside one second: the cursors are seconds
 * (`before_time`/`since_time`), so a page ending between two messages of the same second would
 * make the next page skip the rest of that second. Such a page ends before that second instead,
 * or, when the whole page is that one second, takes all of it (up to `SAME_SECOND_MAX`).
 * `since_time` alone pages forward: the oldest messages newer than it. Newest first either way.
 */
async function messagePage(
  db: Db,
  r: { wa_id: string; before_time?: number | undefined; since_time?: number | undefined; limit: number },
): Promise<Selectable<MessagesTable>[]> {
  const forward = r.since_time !== undefined && r.before_time === undefined;
  const dir = forward ? 'asc' : 'desc';
  let q = db.selectFrom('messages').selectAll().where('wa_id', '=', r.wa_id);
  if (r.before_time !== undefined) q = q.where('timestamp', '<', r.before_time);
  if (r.since_time !== undefined) q = q.where('timestamp', '>', r.since_time);
  const ordered = (query: typeof q) =>
    query.orderBy('timestamp', dir).orderBy('created_at', dir).orderBy('id', dir);
  const rows = await ordered(q)
    .limit(r.limit + 1)
    .execute();
  let page = rows.slice(0, r.limit);
  const last = page.at(-1);
  if (rows.length > r.limit && last && rows[r.limit]?.timestamp === last.timestamp) {
    const before = page.filter((m) => m.timestamp !== last.timestamp);
    page = before.length
      ? before
      : await ordered(q.where('timestamp', '=', last.timestamp))
          .limit(SAME_SECOND_MAX)
          .execute();
  }
  return forward ? page.reverse() : page;
}

export function startRpc(deps: RpcDeps): Subscription[] {
  const { db, bus, log } = deps;
  const sender = createSender({ db, bus, log });
  const queue = { queue: 'chats' };

  /** The chat as the caller sees it now (their new_messages), after any change. */
  const chatRecordOf = async (waId: string, userId: number) => {
    const row = await db.selectFrom('chats').selectAll().where('wa_id', '=', waId).executeTakeFirstOrThrow();
    const [record] = await chatRecords(db, [row], userId);
    if (!record) throw new ServiceError('not_found', 'No chat with this wa_id.');
    return record;
  };

  let templates: { at: number; list: Array<{ name: string }> } | undefined;

  return [
    bus.serve(sendMessage, async (r) => sender.send(r.principal, r.message, r.idempotency_key), queue),

    bus.serve(
      listMessages,
      async (r) => {
        const chat = await readableChat(db, r.principal, r.wa_id);
        const rows = await messagePage(db, r);
        const oldest = rows.at(-1);
        const older =
          oldest &&
          (await db
            .selectFrom('messages')
            .select('id')
            .where('wa_id', '=', r.wa_id)
            .where('timestamp', '<', oldest.timestamp)
            .limit(1)
            .executeTakeFirst());
        return {
          results: await messageRecords(db, rows, new Map([[chat.wa_id, chat]])),
          has_older: Boolean(older),
        };
      },
      queue,
    ),

    bus.serve(
      getMessage,
      async (r) => {
        assertMayMessage(r.principal);
        const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(r.id);
        const row = await db
          .selectFrom('messages')
          .selectAll()
          .where((eb) =>
            uuid ? eb.or([eb('id', '=', r.id), eb('wamid', '=', r.id)]) : eb('wamid', '=', r.id),
          )
          .executeTakeFirst();
        if (!row) throw new ServiceError('not_found', 'No message with this id.');
        const chat = await readableChat(db, r.principal, row.wa_id);
        const [record] = await messageRecords(db, [row], new Map([[chat.wa_id, chat]]));
        if (!record) throw new ServiceError('not_found', 'No message with this id.');
        return record;
      },
      queue,
    ),

    bus.serve(
      listChats,
      async (r) => {
        const p = r.principal;
        assertMayMessage(p);
        let q = db.selectFrom('chats as c').leftJoin('persons as p', 'p.wa_id', 'c.wa_id');
        if (p.permissions.can_read_chats === 'assigned') q = q.where((eb) => assignedToCaller(eb, p));
        const f = r.filters;
        if (f.resolved !== undefined) q = q.where('c.resolved', '=', f.resolved);
        if (f.assigned_to_user !== undefined) q = q.where('c.assigned_to_user', '=', f.assigned_to_user);
        if (f.assigned_group !== undefined) q = q.where('c.assigned_group', '=', f.assigned_group);
        if (f.search) {
          const like = containsPattern(f.search);
          q = q.where((eb) =>
            eb.or([eb('c.wa_id', 'like', like), eb(sql`lower(p.profile_name)`, 'like', like)]),
          );
        }
        if (f.unread !== undefined) {
          const unread = sql<boolean>`exists (
            select 1 from messages m
            left join read_marks rm on rm.wa_id = m.wa_id and rm.user_id = ${p.user_id}
            where m.wa_id = c.wa_id and not m.from_us and m.timestamp > coalesce(rm.read_until, 0))`;
          q = q.where(f.unread ? unread : sql<boolean>`not ${unread}`);
        }
        const { n } = await q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
        const rows = await q
          .selectAll('c')
          .orderBy('c.last_message_at', 'desc')
          .orderBy('c.wa_id')
          .limit(r.limit)
          .offset(r.offset)
          .execute();
        return { count: Number(n), results: await chatRecords(db, rows, p.user_id) };
      },
      queue,
    ),

    bus.serve(
      getChat,
      async (r) => {
        await readableChat(db, r.principal, r.wa_id);
        return chatRecordOf(r.wa_id, r.principal.user_id);
      },
      queue,
    ),

    bus.serve(
      updateChat,
      async (r) => {
        const chat = await readableChat(db, r.principal, r.wa_id);
        assertMayWrite(r.principal, r.wa_id, chat);
        if (chat.resolved !== r.resolved) {
          await db.transaction().execute(async (trx) => {
            await trx
              .updateTable('chats')
              .set({ resolved: r.resolved })
              .where('wa_id', '=', r.wa_id)
              .execute();
            const action = r.resolved ? 'chat.resolved' : 'chat.reopened';
            await insertAuditEntry(trx, chatAuditEntry(r.principal, action, r.wa_id, {}));
          });
        }
        return chatRecordOf(r.wa_id, r.principal.user_id);
      },
      queue,
    ),

    bus.serve(
      assignChat,
      async (r) => {
        const chat = await readableChat(db, r.principal, r.wa_id);
        assertMayWrite(r.principal, r.wa_id, chat);
        const next = {
          assigned_to_user: r.assigned_to_user === undefined ? chat.assigned_to_user : r.assigned_to_user,
          assigned_group: r.assigned_group === undefined ? chat.assigned_group : r.assigned_group,
        };
        const changed =
          next.assigned_to_user !== chat.assigned_to_user || next.assigned_group !== chat.assigned_group;
        // Handing a resolved chat to someone means there is work again.
        const reopen =
          chat.resolved && (next.assigned_to_user !== null || next.assigned_group !== null) && changed;
        await db.transaction().execute(async (trx) => {
          await trx
            .updateTable('chats')
            .set({ ...next, ...(reopen && { resolved: false }) })
            .where('wa_id', '=', r.wa_id)
            .execute();
          if (changed) {
            const unassigned = next.assigned_to_user === null && next.assigned_group === null;
            await insertAuditEntry(
              trx,
              chatAuditEntry(r.principal, unassigned ? 'chat.unassigned' : 'chat.assigned', r.wa_id, {
                assigned_to_user: next.assigned_to_user,
                assigned_group: next.assigned_group,
                previous_user: chat.assigned_to_user,
                previous_group: chat.assigned_group,
              }),
            );
          }
          if (reopen) {
            await insertAuditEntry(
              trx,
              chatAuditEntry(r.principal, 'chat.reopened', r.wa_id, { reason: 'assigned' }),
            );
          }
        });
        return chatRecordOf(r.wa_id, r.principal.user_id);
      },
      queue,
    ),

    bus.serve(
      markAsReceived,
      async (r) => {
        await readableChat(db, r.principal, r.customer_wa_id);
        await db
          .insertInto('read_marks')
          .values({ user_id: r.principal.user_id, wa_id: r.customer_wa_id, read_until: r.timestamp })
          .onConflict((oc) =>
            oc.columns(['user_id', 'wa_id']).doUpdateSet({
              read_until: sql<number>`greatest(read_marks.read_until, excluded.read_until)`,
            }),
          )
          .execute();
        await db
          .updateTable('messages')
          .set({ received: true })
          .where('wa_id', '=', r.customer_wa_id)
          .where('from_us', '=', false)
          .where('timestamp', '<=', r.timestamp)
          .where('received', '=', false)
          .execute();
        const mark = await db
          .selectFrom('read_marks')
          .select('read_until')
          .where('user_id', '=', r.principal.user_id)
          .where('wa_id', '=', r.customer_wa_id)
          .executeTakeFirstOrThrow();
        const { n } = await db
          .selectFrom('messages')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('wa_id', '=', r.customer_wa_id)
          .where('from_us', '=', false)
          .where('timestamp', '>', mark.read_until)
          .executeTakeFirstOrThrow();
        return { customer_wa_id: r.customer_wa_id, timestamp: mark.read_until, new_messages: Number(n) };
      },
      queue,
    ),

    bus.serve(
      listPersons,
      async (r) => {
        // A customer is visible exactly when their chat is (canReadChat), in lists as everywhere.
        const p = r.principal;
        assertMayMessage(p);
        let q = db.selectFrom('persons').innerJoin('chats as c', 'c.wa_id', 'persons.wa_id');
        if (p.permissions.can_read_chats === 'assigned') q = q.where((eb) => assignedToCaller(eb, p));
        if (r.search) {
          const like = containsPattern(r.search);
          q = q.where((eb) =>
            eb.or([eb('persons.wa_id', 'like', like), eb(sql`lower(persons.profile_name)`, 'like', like)]),
          );
        }
        const { n } = await q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
        const rows = await q
          .selectAll('persons')
          .orderBy('persons.updated_at', 'desc')
          .orderBy('persons.wa_id')
          .limit(r.limit)
          .offset(r.offset)
          .execute();
        return {
          count: Number(n),
          results: rows.map((p) => ({
            wa_id: p.wa_id,
            profile_name: p.profile_name,
            first_seen_at: posixSeconds(p.first_seen_at),
          })),
        };
      },
      queue,
    ),

    bus.serve(
      listTemplates,
      async (r) => {
        const fresh = templates && Date.now() - templates.at < deps.templateCacheSeconds * 1000;
        if (!fresh || r.refresh || !templates) {
          try {
            const res = await deps.network.listTemplates();
            templates = { at: Date.now(), list: res.waba_templates };
          } catch (err) {
            log.warn({ err }, 'templates not read from the network');
            if (!templates)
              throw ServiceError.unavailable('network', 'Templates could not be read from the network.', {
                cause: err,
              });
          }
        }
        return {
          count: templates.list.length,
          fetched_at: posixSeconds(templates.at),
          results: templates.list.slice(r.offset, r.offset + r.limit),
        };
      },
      queue,
    ),

    bus.serve(
      listWhatsappAccounts,
      async (r) => ({ count: 1, results: [deps.account].slice(r.offset, r.offset + r.limit) }),
      queue,
    ),
  ];
}
