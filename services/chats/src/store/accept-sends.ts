import type { Tag } from '@switchboard/proto';
import { type Kysely, type Selectable, sql } from 'kysely';
import type { ChatsDatabase, ChatsTable } from '../db.ts';
import { businessWindowEnd } from '../domain/window.ts';
import { arrayParameter, batchRows } from './array-parameter.ts';
import type { QueuedMessage } from './messages.ts';

/** One send to accept: the message to store, and who may write to which chats. */
export interface SendToAccept {
  message: QueuedMessage;
  /** `writeAccessMask` of the sender for this chat. */
  accessMask: number;
  groupIds: readonly number[];
}

export interface AcceptedSend {
  /** The chat before this statement; undefined when the customer has no chat yet. */
  chat: Selectable<ChatsTable> | undefined;
  profileName: string;
  /** The statement stored the message. */
  stored: boolean;
  /** The chat as the statement left it (its activity and business window moved), when stored. */
  updatedChat: Selectable<ChatsTable> | undefined;
  chatTags: Tag[];
}

interface Row {
  ord: number;
  chat: Selectable<ChatsTable> | null;
  profile_name: string | null;
  stored: boolean;
  last_message_at: number | null;
  business_window_expires_at: number | null;
  chat_tags: Tag[] | null;
}

/**
 * Accepts sends into existing chats in one statement (one round trip, atomic, no explicit
 * transaction), whatever their number: reads each chat, stores each message whose chat exists,
 * whose sender may write to it and whose care window is open (or which is a template), moves
 * the chats' activity and business windows, and answers each send's chat, whether it was
 * stored, and the chat's tags.
 *
 * - The permission is the sender's `writeAccessMask`, indexed by the class of the chat's
 *   assignees (`assigneeBit`), so the rule stays the one `canWriteChat` states.
 * - The window is `windowExpiresAt(chat) > timestamp`: `greatest` skips nulls as it does.
 * - A reused Idempotency-Key is skipped (`on conflict do nothing`) and answered not stored; the
 *   caller then finds the earlier message.
 * - Chats are locked in wa_id order, as the inbound fold locks them, so concurrent statements
 *   never deadlock; the lock also makes each statement see the chat's latest assignment.
 * - Messages are inserted in the given order, so `send_seq` (the per-customer send order)
 *   follows acceptance.
 */
export async function acceptSends(
  db: Kysely<ChatsDatabase>,
  sends: readonly SendToAccept[],
): Promise<AcceptedSend[]> {
  if (!sends.length) return [];
  const result = await acceptSendsStatement(sends).execute(db);
  return result.rows.map(acceptedSendOf);
}

/** The statement of `acceptSends`. */
export function acceptSendsStatement(sends: readonly SendToAccept[]) {
  // Chats and persons are read by key, not only joined with the batch: a plan made while the
  // tables were small (a new inbox) would read all of them for every accept until the next
  // ANALYZE (test/batch-plans.test.ts).
  const waIds = arrayParameter(
    sends.map((s) => s.message.waId),
    'text',
  );
  return sql<Row>`
    with req as (
      select ord::int as ord, id, wa_id, type, payload, sender, ts, idem, hash, business_end, access_mask,
             group_ids::int[] as group_ids
      from ${batchRows(
        sends,
        'u',
        {
          id: ['uuid', (s) => s.message.id],
          wa_id: ['text', (s) => s.message.waId],
          type: ['text', (s) => s.message.type],
          payload: ['jsonb', (s) => JSON.stringify(s.message.wabaPayload)],
          sender: ['int', (s) => s.message.senderUserId],
          ts: ['bigint', (s) => s.message.timestamp],
          idem: ['text', (s) => s.message.idempotencyKey],
          hash: ['text', (s) => s.message.requestHash],
          business_end: [
            'bigint',
            (s) => (s.message.type === 'template' ? businessWindowEnd(s.message.timestamp) : null),
          ],
          access_mask: ['int', (s) => s.accessMask],
          // An array literal of its own: arrays of arrays flatten.
          group_ids: ['text', (s) => `{${s.groupIds.join(',')}}`],
        },
        'ord',
      )}
    ),
    locked as (
      select chats.* from chats where wa_id = any(${waIds})
      order by wa_id for update
    ),
    checked as (
      select req.*, to_jsonb(locked) as chat,
        (req.business_end is not null
          or greatest(locked.customer_window_expires_at, locked.network_window_expires_at,
                      locked.business_window_expires_at) > req.ts) as window_open,
        (req.access_mask >> (
          3 * (case when locked.assigned_to_user is null then 0
                    when locked.assigned_to_user = req.sender then 1 else 2 end)
          + (case when locked.assigned_group is null then 0
                  when locked.assigned_group = any(req.group_ids) then 1 else 2 end)
        )) & 1 = 1 as may_write
      from req join locked on locked.wa_id = req.wa_id
    ),
    ins as (
      insert into messages (id, wamid, wa_id, from_us, type, waba_payload, sender_user_id, timestamp,
                            send_state, idempotency_key, request_hash)
      select id, null, wa_id, true, type, payload, sender, ts, 'queued', idem, hash
      from checked where window_open and may_write
      order by ord
      on conflict do nothing
      returning id
    ),
    moved as (
      update chats set
        last_message_at = greatest(chats.last_message_at, m.ts),
        business_window_expires_at = case when m.business_end is null then chats.business_window_expires_at
          else greatest(coalesce(chats.business_window_expires_at, 0), m.business_end) end
      from (select req.wa_id, max(req.ts) as ts, max(req.business_end) as business_end
            from req join ins on ins.id = req.id group by req.wa_id) m
      where chats.wa_id = m.wa_id
      returning chats.wa_id, chats.last_message_at, chats.business_window_expires_at
    )
    select req.ord, checked.chat, persons.profile_name,
      exists (select 1 from ins where ins.id = req.id) as stored,
      moved.last_message_at, moved.business_window_expires_at,
      (select json_agg(json_build_object('id', t.id, 'name', t.name, 'web_inbox_color', t.web_inbox_color,
                                         'extra', t.extra, 'tagging_id', ct.id) order by ct.id)
       from chat_taggings ct join tags t on t.id = ct.tag_id where ct.wa_id = req.wa_id) as chat_tags
    from req
    left join checked on checked.ord = req.ord
    left join persons on persons.wa_id = req.wa_id and persons.wa_id = any(${waIds})
    left join moved on moved.wa_id = req.wa_id
    order by req.ord`;
}

function acceptedSendOf(r: Row): AcceptedSend {
  const chat = r.chat ? chatOfJson(r.chat) : undefined;
  return {
    chat,
    profileName: r.profile_name ?? '',
    stored: r.stored,
    updatedChat:
      chat && r.stored
        ? {
            ...chat,
            last_message_at: r.last_message_at ?? chat.last_message_at,
            business_window_expires_at: r.business_window_expires_at,
          }
        : undefined,
    chatTags: r.chat_tags ?? [],
  };
}

/** A chat row read through `to_jsonb`: its one timestamp comes back as text. */
function chatOfJson(c: Selectable<ChatsTable>): Selectable<ChatsTable> {
  return { ...c, created_at: new Date(c.created_at) };
}
