import { z } from 'zod';
import { defineCommand, defineConsumer } from './contracts.ts';
import { MessageMediaSchema } from './media.ts';
import { WaIdSchema } from './network/common.ts';
import { outboundMessageSchema } from './network/outbound.ts';
import { PrincipalSchema } from './principal.ts';
import { chatsRpc, foundPage, PageRequest, withPrincipal } from './requests.ts';
import { TagSchema } from './tag.ts';
import { posixSecondsSchema } from './time.ts';

// ---- the send request of the inbox API: the network's message types, addressed by wa_id ----

const envelope = {
  wa_id: WaIdSchema,
  /** Reply to an earlier message (its wamid). */
  context: z.strictObject({ message_id: z.string().min(1) }).optional(),
};

export const SendMessageRequestSchema = outboundMessageSchema(envelope).meta({
  id: 'SendMessage',
  description:
    'Any message type the network sends, addressed by `wa_id`. Everything but `template` is free-form and needs ' +
    'an open customer care window (else HTTP 453).',
});
export type SendMessageRequest = z.infer<typeof SendMessageRequestSchema>;

// ---- resources as chats returns them (user references by id; the gateway expands them) ----

export const WabaStatusesSchema = z.object({
  sent: posixSecondsSchema().optional(),
  delivered: posixSecondsSchema().optional(),
  read: posixSecondsSchema().optional(),
  failed: z.object({ timestamp: posixSecondsSchema(), errors: z.array(z.unknown()) }).optional(),
});
export type WabaStatuses = z.infer<typeof WabaStatusesSchema>;

export const ContactSchema = z
  .object({
    wa_id: WaIdSchema,
    waba_payload: z.object({ profile: z.object({ name: z.string() }), wa_id: WaIdSchema }),
    initials: z.string(),
    last_message_timestamp: posixSecondsSchema('the chat’s latest message.').nullable(),
    resolved: z.boolean(),
    messaging_window_expires_at: posixSecondsSchema(
      'end of the customer care window; free-form messages need it in the future.',
    ).nullable(),
  })
  .meta({ id: 'Contact' });
export type Contact = z.infer<typeof ContactSchema>;

/**
 * The spec's `before_time` / `since_time` of a Message: the cursors (POSIX seconds) that page
 * the chat's messages from this one, for `messages/?before_time=` (older than this message) and
 * `messages/?since_time=` (newer than it). A page never ends inside one second, so paging from
 * the last message of a page loses and repeats nothing.
 */
export const MessagePageCursors = z.object({
  before_time: posixSecondsSchema('pass as `before_time` to list the messages older than this one.'),
  since_time: posixSecondsSchema('pass as `since_time` to list the messages newer than this one.'),
});

export const MessageRecordSchema = z.object({
  id: z.string(),
  wamid: z.string().nullable(),
  type: z.string(),
  waba_payload: z.unknown(),
  waba_statuses: WabaStatusesSchema,
  contact: ContactSchema,
  from_us: z.boolean(),
  received: z.boolean(),
  sender_user_id: z.number().int().nullable(),
  timestamp: posixSecondsSchema('when the message was sent (the network’s time for customer messages).'),
  ...MessagePageCursors.shape,
  customer_wa_id: WaIdSchema,
  tags: z.array(TagSchema),
  chat_tags: z.array(TagSchema),
  media: MessageMediaSchema.nullable(),
});
export type MessageRecord = z.infer<typeof MessageRecordSchema>;

export const ChatRecordSchema = z.object({
  wa_id: WaIdSchema,
  contact: ContactSchema,
  new_messages: z.number().int(),
  last_message: MessageRecordSchema.nullable(),
  assigned_to_user_id: z.number().int().nullable(),
  assigned_group_id: z.number().int().nullable(),
  resolved: z.boolean(),
  tags: z.array(TagSchema),
});
export type ChatRecord = z.infer<typeof ChatRecordSchema>;

// ---- request/reply served by chats ----

export const sendMessage = chatsRpc('send_message', {
  request: withPrincipal({
    /**
     * Per sender: a repeated key answers the message stored first (and sends once); the same
     * key with a different message is refused (422 `idempotency_key_reused`). The gateway
     * fills it when the client sent none, so a send whose outcome it cannot know (503) can be
     * retried with the key it answers.
     */
    idempotency_key: z.string().min(1).max(200).optional(),
    message: SendMessageRequestSchema,
  }),
  response: MessageRecordSchema,
  retryKeyField: 'idempotency_key',
});

export const listMessages = chatsRpc('list_messages', {
  request: withPrincipal({
    wa_id: WaIdSchema,
    /** Only messages older than this second, newest first. */
    before_time: z.number().int().optional(),
    /** Only messages newer than this second: the oldest of them, answered newest first. */
    since_time: z.number().int().optional(),
    limit: z.number().int().min(1).max(100),
  }),
  response: z.object({
    /** Newest first; never ends inside one second (see `MessagePageCursors`). */
    results: z.array(MessageRecordSchema),
    /** Messages older than the last result exist. */
    has_older: z.boolean(),
  }),
});

export const getMessage = chatsRpc('get_message', {
  request: withPrincipal({ id: z.string() }),
  response: MessageRecordSchema,
});

export const ChatFiltersSchema = z.object({
  unread: z.boolean().optional(),
  resolved: z.boolean().optional(),
  assigned_to_user: z.number().int().optional(),
  assigned_group: z.number().int().optional(),
  search: z.string().max(100).optional(),
  /** A tag's id or name: only chats tagged with it. */
  tag: z.string().min(1).max(100).optional(),
});

export const listChats = chatsRpc('list_chats', {
  request: withPrincipal({ filters: ChatFiltersSchema, ...PageRequest }),
  response: foundPage(ChatRecordSchema),
});

export const getChat = chatsRpc('get_chat', {
  request: withPrincipal({ wa_id: WaIdSchema }),
  response: ChatRecordSchema,
});

export const updateChat = chatsRpc('update_chat', {
  request: withPrincipal({ wa_id: WaIdSchema, resolved: z.boolean() }),
  response: ChatRecordSchema,
});

export const assignChat = chatsRpc('assign_chat', {
  request: withPrincipal({
    wa_id: WaIdSchema,
    assigned_to_user: z.number().int().nullable().optional(),
    assigned_group: z.number().int().nullable().optional(),
  }),
  response: ChatRecordSchema,
});

export const markAsReceived = chatsRpc('mark_as_received', {
  request: withPrincipal({ customer_wa_id: WaIdSchema, timestamp: z.number().int().positive() }),
  response: z.object({
    customer_wa_id: WaIdSchema,
    timestamp: posixSecondsSchema('the user’s read mark in this chat.'),
    new_messages: z.number().int(),
  }),
});

export const PersonSchema = z
  .object({ wa_id: WaIdSchema, profile_name: z.string(), first_seen_at: posixSecondsSchema() })
  .meta({ id: 'Person' });

export const listPersons = chatsRpc('list_persons', {
  request: z.object({
    principal: PrincipalSchema,
    search: z.string().max(100).optional(),
    ...PageRequest,
  }),
  response: foundPage(PersonSchema),
});

export const listTemplates = chatsRpc('list_templates', {
  request: z.object({ refresh: z.boolean(), ...PageRequest }),
  response: z.object({
    /** All templates of the number; `results` holds the page asked for. */
    count: z.number().int(),
    fetched_at: posixSecondsSchema('when the templates were read from the network.'),
    results: z.array(z.looseObject({ name: z.string() })),
  }),
});

export const WhatsappAccountSchema = z
  .object({
    phone_number: z.string(),
    provider_base_url: z.string(),
    webhook_url: z.string().nullable(),
  })
  .meta({ id: 'WhatsappAccount' });

export const listWhatsappAccounts = chatsRpc('list_accounts', {
  request: z.object(PageRequest),
  response: foundPage(WhatsappAccountSchema),
});

// ---- durable command: deliver a stored message to the network ----

export const deliverMessage = defineCommand('deliver_message', z.object({ message_id: z.uuid() }));

export const deliverMessageConsumer = defineConsumer({
  durable: 'chats-deliver',
  message: deliverMessage,
  // The worker signals progress while it sends, so this only decides how soon a crashed
  // worker's message is picked up again.
  ackWaitSeconds: 10,
  // Sends waiting for a retry or for an earlier send to the same customer hold a slot here
  // (a delayed nak keeps it) but no handler: one customer's backlog never stalls the others.
  maxAckPending: 10_000,
  concurrency: 32,
  // Never terminated by the bus: the worker retries database and NATS failures itself and
  // gives up on a send only by recording it as failed.
});

// ---- inbound dead letters: network bodies chats could never store ----

export const InboundDeadLetterSchema = z
  .object({
    id: z.number().int(),
    stream_seq: z.number().int().describe('Sequence of the body in the instance’s inbound stream.'),
    received_at: posixSecondsSchema('when the gateway accepted the body.'),
    signature_verified: z.boolean(),
    wa_ids: z.array(WaIdSchema).describe('Customers the body names, when it could be read.'),
    body: z.string().describe('The body as received (UTF-8); its first 8 KiB when longer.'),
    body_bytes: z.number().int().describe('Size of the body as received.'),
    body_truncated: z.boolean(),
    error: z.string(),
    error_code: z.string().nullable().describe('SQLSTATE or error name of the failure.'),
    attempts: z.number().int(),
    created_at: posixSecondsSchema('when it was dead-lettered.'),
    redriven_at: posixSecondsSchema('when it was re-driven; null until then.').nullable(),
    redrivable: z.boolean().describe('False for stream messages that were not a webhook envelope at all.'),
  })
  .meta({ id: 'InboundDeadLetter' });
export type InboundDeadLetter = z.infer<typeof InboundDeadLetterSchema>;

export const listInboundDeadLetters = chatsRpc('list_inbound_dead_letters', {
  request: z.object({ ...PageRequest, redriven: z.boolean().optional() }),
  response: foundPage(InboundDeadLetterSchema),
});

export const redriveInboundDeadLetter = chatsRpc('redrive_inbound_dead_letter', {
  request: withPrincipal({ id: z.number().int().positive() }),
  response: InboundDeadLetterSchema,
});
