import {
  type ChatRecord,
  ContactSchema,
  MessageMediaSchema,
  MessagePageCursors,
  type MessageRecord,
  posixSecondsSchema,
  ServiceError,
  TagSchema,
  WabaStatusesSchema,
  WaIdSchema,
} from '@switchboard/proto';
import type { Bus } from '@switchboard/proto/bus';
import { z } from 'zod';
import { GroupOut, UserOut } from '../domain/schemas.ts';
import type { Guards } from '../http/guards.ts';
import type { Groups } from '../use-cases/groups.ts';
import type { Users } from '../use-cases/users.ts';

/** What every messaging route needs: the bus to ask the services, the guards, the public URL for links. */
export interface ServiceRouteOptions {
  bus: Bus;
  guards: Guards;
  publicUrl: string;
}

/** Routes that expand user and group references of what the services return. */
export interface MessagingRouteOptions extends ServiceRouteOptions {
  users: Users;
  groups: Groups;
}

export const MessageOut = z
  .object({
    id: z.string(),
    wamid: z.string().nullable().describe('The network’s message id; null until the network accepted it.'),
    type: z.string(),
    waba_payload: z
      .unknown()
      .describe('The network body of the message: as received, or as sent to the network.'),
    waba_statuses: WabaStatusesSchema.describe(
      'POSIX times of `sent`, `delivered`, `read` (a later stage implies the earlier ones), and `failed` with the network’s errors.',
    ),
    contact: ContactSchema,
    from_us: z.boolean(),
    received: z
      .boolean()
      .describe(
        'Customer messages: an inbox user marked them read (`mark_as_received/`). Always false for ours.',
      ),
    sender: UserOut.nullable().describe('The inbox user who sent it; null for customer messages.'),
    timestamp: posixSecondsSchema('when the message was sent (the network’s time for customer messages).'),
    ...MessagePageCursors.shape,
    customer_wa_id: WaIdSchema,
    tags: z.array(TagSchema).describe('Tags of the message, each with the `tagging_id` that attached it.'),
    chat_tags: z.array(TagSchema).describe('Tags of the chat.'),
    media: MessageMediaSchema.nullable().describe(
      'The file of a customer’s image, audio, video, document or sticker once the inbox stored it (read it ' +
        'from `file`); null while it is fetched and for other messages; `status: failed` with the network’s ' +
        'error when the network did not hand it over.',
    ),
  })
  .meta({ id: 'Message' });
export type MessageOut = z.infer<typeof MessageOut>;

export const ChatOut = z
  .object({
    wa_id: WaIdSchema,
    contact: ContactSchema,
    new_messages: z.number().int(),
    last_message: MessageOut.nullable(),
    assigned_to_user: UserOut.nullable(),
    assigned_group: GroupOut.nullable(),
    resolved: z.boolean(),
    tags: z.array(TagSchema),
  })
  .meta({ id: 'Chat' });
export type ChatOut = z.infer<typeof ChatOut>;

export const tags = ['messaging'];
export const WaIdParam = z.object({ wa_id: WaIdSchema });
/**
 * Our id (a UUID) or the network's wamid (`wamid.…`). Something UUID-like that is not a UUID is
 * neither, and refused here: chats would take it for an id and PostgreSQL refuse it as a uuid.
 */
export const MessageIdParam = z.object({
  id: z
    .string()
    .min(1)
    .max(200)
    .refine((id) => !/^[0-9a-f-]{36}$/i.test(id) || z.guid().safeParse(id).success, {
      message: 'Not a message id: a UUID or a wamid.',
    }),
});
export const Bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

/** Expands the ids of senders, assignees and groups of what chats returns into their API objects. */
export function createExpanders(deps: { users: Users; groups: Groups }) {
  async function expandMessages(records: MessageRecord[]): Promise<MessageOut[]> {
    const senders = await deps.users.byIds(
      records.flatMap((m) => (m.sender_user_id === null ? [] : [m.sender_user_id])),
    );
    return records.map(({ sender_user_id, ...m }) => ({
      ...m,
      sender: sender_user_id === null ? null : (senders.get(sender_user_id) ?? null),
    }));
  }

  async function expandChats(records: ChatRecord[]): Promise<ChatOut[]> {
    const users = await deps.users.byIds(
      records.flatMap((c) => (c.assigned_to_user_id === null ? [] : [c.assigned_to_user_id])),
    );
    const groups = await deps.groups.byIds(
      records.flatMap((c) => (c.assigned_group_id === null ? [] : [c.assigned_group_id])),
    );
    const lasts = await expandMessages(records.flatMap((c) => (c.last_message ? [c.last_message] : [])));
    const lastByChat = new Map(lasts.map((m) => [m.customer_wa_id, m]));
    return records.map(({ assigned_to_user_id, assigned_group_id, last_message, ...c }) => ({
      ...c,
      last_message: last_message ? (lastByChat.get(c.wa_id) ?? null) : null,
      assigned_to_user: assigned_to_user_id === null ? null : (users.get(assigned_to_user_id) ?? null),
      assigned_group: assigned_group_id === null ? null : (groups.get(assigned_group_id) ?? null),
    }));
  }

  const expandMessage = async (m: MessageRecord) => {
    const [out] = await expandMessages([m]);
    if (!out) throw new ServiceError('not_found', 'No message with this id.');
    return out;
  };

  const expandChat = async (c: ChatRecord) => {
    const [out] = await expandChats([c]);
    if (!out) throw new ServiceError('not_found', 'No chat with this wa_id.');
    return out;
  };

  return { expandMessages, expandChats, expandMessage, expandChat };
}
