import {
  type ChatAccessSubject,
  canReceiveChat,
  type NetworkEvent,
  type Principal,
} from '@switchboard/proto';

/** What one webhook gets of one event, given its owner's rights. */
export type Audience =
  | { kind: 'all' }
  | { kind: 'none'; reason: 'owner_inactive' | 'not_permitted' }
  /** Some of the event's customers are readable: a copy of the body with only theirs. */
  | { kind: 'partial'; body: string };

/**
 * A webhook receives what its owner may read at delivery time: admins and the configurator
 * everything; a user the events of chats they may read (`canReadChat`). A deactivated owner
 * (null principal) receives nothing. An event that concerns no chat (a body that is not a
 * messages body, a test) goes to admins and the configurator only, since what it carries is
 * not known.
 */
export function audienceOf(event: NetworkEvent, owner: Principal | null): Audience {
  if (!owner) return { kind: 'none', reason: 'owner_inactive' };
  if (owner.role === 'admin' || owner.role === 'configurator') return { kind: 'all' };
  const chats: ChatAccessSubject[] =
    event.chats ?? event.wa_ids.map((wa_id) => ({ wa_id, assigned_to_user: null, assigned_group: null }));
  if (!chats.length) return { kind: 'none', reason: 'not_permitted' };
  const readable = new Set(chats.filter((c) => canReceiveChat(owner, c)).map((c) => c.wa_id));
  if (readable.size === 0) return { kind: 'none', reason: 'not_permitted' };
  if (readable.size === new Set(chats.map((c) => c.wa_id)).size) return { kind: 'all' };
  const body = filterBody(event.body, readable);
  return body === null ? { kind: 'none', reason: 'not_permitted' } : { kind: 'partial', body };
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function isObject(v: Json | undefined): v is { [key: string]: Json } {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function keepOnly(
  list: Json | undefined,
  waIdOf: (item: { [key: string]: Json }) => Json | undefined,
  keep: Set<string>,
) {
  if (!Array.isArray(list)) return list;
  return list.filter((item) => {
    if (!isObject(item)) return false;
    const id = waIdOf(item);
    return typeof id === 'string' && keep.has(id);
  });
}

/**
 * The network body (`entry[].changes[].value` with `contacts`, `messages`, `statuses`) with
 * only the given customers' items; null when nothing of theirs is left or the body is not a
 * messages body. A body mixing customers is rare (the network batches at most a few), so
 * re-serialising it for the partial case costs little.
 */
export function filterBody(body: string, keep: Set<string>): string | null {
  let parsed: Json;
  try {
    parsed = JSON.parse(body) as Json;
  } catch {
    return null;
  }
  if (!isObject(parsed) || !Array.isArray(parsed.entry)) return null;
  let items = 0;
  const entry = parsed.entry.map((e) => {
    if (!isObject(e) || !Array.isArray(e.changes)) return e;
    const changes = e.changes.map((ch) => {
      if (!isObject(ch) || !isObject(ch.value)) return ch;
      const v = ch.value;
      const value: { [key: string]: Json } = { ...v };
      const contacts = keepOnly(v.contacts, (c) => c.wa_id, keep);
      const messages = keepOnly(v.messages, (m) => m.from, keep);
      const statuses = keepOnly(v.statuses, (s) => s.recipient_id, keep);
      if (contacts !== undefined) value.contacts = contacts;
      if (messages !== undefined) value.messages = messages;
      if (statuses !== undefined) value.statuses = statuses;
      for (const l of [messages, statuses]) if (Array.isArray(l)) items += l.length;
      return { ...ch, value };
    });
    return { ...e, changes };
  });
  return items ? JSON.stringify({ ...parsed, entry }) : null;
}
