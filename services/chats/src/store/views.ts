import type { ChatRecord, Contact, MessageRecord, Tag } from '@switchboard/proto';
import { type Kysely, type Selectable, sql } from 'kysely';
import type { ChatsDatabase, ChatsTable, MessagesTable } from '../db.ts';
import { initials } from '../domain/initials.ts';
import { foldStatuses, type StatusRow } from '../domain/statuses.ts';
import { windowExpiresAt } from '../domain/window.ts';
import { chatTagsOf, messageTagsOf } from './tags.ts';

type Db = Kysely<ChatsDatabase>;
type ChatRow = Selectable<ChatsTable>;
type MessageRow = Selectable<MessagesTable>;

export function contactOf(chat: ChatRow, profileName: string): Contact {
  return {
    wa_id: chat.wa_id,
    waba_payload: { profile: { name: profileName }, wa_id: chat.wa_id },
    initials: initials(profileName, chat.wa_id),
    last_message_timestamp: chat.last_message_at || null,
    resolved: chat.resolved,
    messaging_window_expires_at: windowExpiresAt(chat),
  };
}

/** Statuses keyed by wamid, or by message id for a message the network never accepted. */
export function statusKey(m: { wamid: string | null; id: string }): string {
  return m.wamid ?? m.id;
}

async function statusesFor(db: Db, keys: string[]): Promise<Map<string, StatusRow[]>> {
  const map = new Map<string, StatusRow[]>();
  if (!keys.length) return map;
  const rows = await db
    .selectFrom('message_statuses')
    .select(['wamid', 'status', 'timestamp', 'errors'])
    .where('wamid', 'in', keys)
    .execute();
  for (const r of rows) {
    const list = map.get(r.wamid) ?? [];
    list.push(r);
    map.set(r.wamid, list);
  }
  return map;
}

export async function profileNames(db: Db, waIds: string[]): Promise<Map<string, string>> {
  if (!waIds.length) return new Map();
  const rows = await db
    .selectFrom('persons')
    .select(['wa_id', 'profile_name'])
    .where('wa_id', 'in', waIds)
    .execute();
  return new Map(rows.map((r) => [r.wa_id, r.profile_name]));
}

/** Message resources for rows of any chats, with their contacts and folded statuses. */
export async function messageRecords(
  db: Db,
  rows: MessageRow[],
  chats?: Map<string, ChatRow>,
  /** The chats' profile names and tags when the caller has read them already. */
  known?: { names: Map<string, string>; chatTags: Map<string, Tag[]> },
): Promise<MessageRecord[]> {
  if (!rows.length) return [];
  const waIds = [...new Set(rows.map((r) => r.wa_id))];
  const chatMap =
    chats ??
    new Map(
      (await db.selectFrom('chats').selectAll().where('wa_id', 'in', waIds).execute()).map((c) => [
        c.wa_id,
        c,
      ]),
    );
  const names = known?.names ?? (await profileNames(db, waIds));
  const statuses = await statusesFor(db, rows.map(statusKey));
  const chatTags = known?.chatTags ?? (await chatTagsOf(db, waIds));
  const messageTags = await messageTagsOf(
    db,
    rows.map((r) => r.id),
  );
  return rows.flatMap((m) => {
    const chat = chatMap.get(m.wa_id);
    if (!chat) return [];
    return [
      toMessageRecord(
        m,
        chat,
        names.get(m.wa_id) ?? '',
        statuses.get(statusKey(m)) ?? [],
        messageTags.get(m.id) ?? [],
        chatTags.get(m.wa_id) ?? [],
      ),
    ];
  });
}

/** The fields of a message row its resource shows. */
export type MessageRecordRow = Pick<
  MessageRow,
  | 'id'
  | 'wamid'
  | 'type'
  | 'waba_payload'
  | 'from_us'
  | 'received'
  | 'sender_user_id'
  | 'timestamp'
  | 'wa_id'
  | 'media'
>;

/** One message resource from its row, its chat, the customer's profile name and its statuses. */
export function toMessageRecord(
  m: MessageRecordRow,
  chat: ChatRow,
  profileName: string,
  statuses: StatusRow[],
  tags: Tag[],
  chatTags: Tag[],
): MessageRecord {
  return {
    id: m.id,
    wamid: m.wamid,
    type: m.type,
    waba_payload: m.waba_payload,
    waba_statuses: foldStatuses(statuses),
    contact: contactOf(chat, profileName),
    from_us: m.from_us,
    received: m.received,
    sender_user_id: m.sender_user_id,
    timestamp: m.timestamp,
    // Pages never end inside one second, so this message's own second is the cursor both ways.
    before_time: m.timestamp,
    since_time: m.timestamp,
    customer_wa_id: m.wa_id,
    tags,
    chat_tags: chatTags,
    media: m.media ?? null,
  };
}

/** Inbound messages newer than the user's read mark, per chat (imported history, without a wamid, is not new). */
async function newMessageCounts(db: Db, userId: number, waIds: string[]): Promise<Map<string, number>> {
  if (!waIds.length) return new Map();
  const rows = await db
    .selectFrom('messages as m')
    .leftJoin('read_marks as r', (j) => j.onRef('r.wa_id', '=', 'm.wa_id').on('r.user_id', '=', userId))
    .select(['m.wa_id', (eb) => eb.fn.countAll<number>().as('n')])
    .where('m.wa_id', 'in', waIds)
    .where('m.from_us', '=', false)
    .where('m.wamid', 'is not', null)
    .where(sql<boolean>`m.timestamp > coalesce(r.read_until, 0)`)
    .groupBy('m.wa_id')
    .execute();
  return new Map(rows.map((r) => [r.wa_id, Number(r.n)]));
}

export async function chatRecords(db: Db, chats: ChatRow[], userId: number): Promise<ChatRecord[]> {
  if (!chats.length) return [];
  const waIds = chats.map((c) => c.wa_id);
  const chatMap = new Map(chats.map((c) => [c.wa_id, c]));
  const names = await profileNames(db, waIds);
  const counts = await newMessageCounts(db, userId, waIds);
  const lastRows = await db
    .selectFrom('messages')
    .selectAll()
    .distinctOn('wa_id')
    .where('wa_id', 'in', waIds)
    .orderBy('wa_id')
    .orderBy('timestamp', 'desc')
    .orderBy('created_at', 'desc')
    .execute();
  const tags = await chatTagsOf(db, waIds);
  const last = new Map(
    (await messageRecords(db, lastRows, chatMap, { names, chatTags: tags })).map((m) => [
      m.customer_wa_id,
      m,
    ]),
  );
  return chats.map((c) => ({
    wa_id: c.wa_id,
    contact: contactOf(c, names.get(c.wa_id) ?? ''),
    new_messages: counts.get(c.wa_id) ?? 0,
    last_message: last.get(c.wa_id) ?? null,
    assigned_to_user_id: c.assigned_to_user,
    assigned_group_id: c.assigned_group,
    resolved: c.resolved,
    tags: tags.get(c.wa_id) ?? [],
  }));
}
