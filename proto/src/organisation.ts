import { z } from 'zod';
import { ServiceError } from './errors.ts';
import { ContactSchema } from './messaging.ts';
import { WaIdSchema } from './network/common.ts';
import { assertMayMessage, type Principal } from './principal.ts';
import { chatsRpc, foundPage, PageRequest, withPrincipal } from './requests.ts';
import { TagSchema } from './tag.ts';
import { posixSecondsSchema } from './time.ts';

/**
 * The inbox's organisation resources, all owned by chats: contact providers and the contacts
 * read from them, tags and their taggings with history, saved responses.
 */

const RowId = z.number().int().min(1).max(2_147_483_647);
/** Any JSON value a client attaches (`extra`); kept as given. */
const Extra = z.unknown();

/**
 * The five operations of a collection chats owns, named `chats.<plural>_list`, `_get`, `_create`,
 * `_update` and `_delete` after their subjects. A creation carries the new item's fields under
 * `field` and answers `created`; a change carries its fields under `changes`.
 */
function collectionRpcs<
  Item extends z.ZodType,
  Filters extends z.ZodRawShape,
  Field extends string,
  Create extends z.ZodType,
  Created extends z.ZodType,
  Update extends z.ZodType,
>(
  plural: string,
  c: { item: Item; filters: Filters; field: Field; create: Create; created: Created; update: Update },
) {
  const op = (name: string) => `${plural}_${name}`;
  const creation = { [c.field]: c.create } as Record<Field, Create>;
  return {
    list: chatsRpc(op('list'), {
      request: withPrincipal({ ...c.filters, ...PageRequest }),
      response: foundPage(c.item),
    }),
    get: chatsRpc(op('get'), { request: withPrincipal({ id: RowId }), response: c.item }),
    create: chatsRpc(op('create'), { request: withPrincipal(creation), response: c.created }),
    update: chatsRpc(op('update'), {
      request: withPrincipal({ id: RowId, changes: c.update }),
      response: c.item,
    }),
    remove: chatsRpc(op('delete'), {
      request: withPrincipal({ id: RowId }),
      response: z.object({ deleted: z.boolean() }),
    }),
  };
}

// ---- who may use what (the gateway checks before reading a body, chats again) ----

/** Tags are for users with `can_use_tags`; the configurator never works in the inbox. */
export function assertMayUseTags(p: Principal): void {
  if (p.role === 'configurator') throw new ServiceError('configurator_not_allowed');
  if (!p.permissions.can_use_tags) throw new ServiceError('permission_denied', 'You may not use tags.');
}

/** Tagging touches chats: tags and reading chats. */
export function assertMayTag(p: Principal): void {
  assertMayUseTags(p);
  assertMayMessage(p);
}

/** Saved responses are the inbox users' tool: the configurator has none. */
export function assertInboxUser(p: Principal): void {
  if (p.role === 'configurator') throw new ServiceError('configurator_not_allowed');
}

// ---- contact providers ----

export const ContactProviderKindSchema = z.enum(['http']);

export const ContactProviderSchema = z
  .object({
    id: z.number().int(),
    name: z.string(),
    kind: ContactProviderKindSchema,
    url: z.string(),
    priority: z
      .number()
      .int()
      .describe('Smaller comes first: its answer wins for a wa_id several providers know.'),
    enabled: z.boolean(),
    timeout_ms: z
      .number()
      .int()
      .describe('How long one request may take before the provider counts as failed.'),
    created_at: posixSecondsSchema('when it was connected.'),
    updated_at: posixSecondsSchema('when it was last changed.'),
  })
  .meta({
    id: 'ContactProvider',
    examples: [
      {
        id: 1,
        name: 'CRM',
        kind: 'http',
        url: 'https://crm.example.com/switchboard/contacts',
        priority: 10,
        enabled: true,
        timeout_ms: 2000,
        created_at: 1_763_900_000,
        updated_at: 1_763_900_000,
      },
    ],
  });
export type ContactProvider = z.infer<typeof ContactProviderSchema>;

export const ContactProviderWithSecretSchema = ContactProviderSchema.extend({
  secret: z
    .string()
    .describe(
      'The signing secret (`whsec_…`): shown only here, at creation. Requests to the provider carry its signature.',
    ),
}).meta({ id: 'ContactProviderWithSecret' });

const ProviderFields = {
  name: z.string().trim().min(1).max(100),
  kind: ContactProviderKindSchema,
  url: z
    .url({ protocol: /^https?$/ })
    .max(2000)
    .describe('Where the pull protocol is POSTed (see the chats README).'),
  priority: z.number().int().min(0).max(10_000),
  enabled: z.boolean(),
  timeout_ms: z.number().int().min(100).max(10_000),
};

export const ContactProviderCreateSchema = z
  .strictObject({
    ...ProviderFields,
    secret: z
      .string()
      .regex(
        /^whsec_[A-Za-z0-9+/]{32,256}={0,2}$/,
        'A Standard Webhooks secret: whsec_ and base64 of 24 or more bytes.',
      )
      .optional()
      .describe(
        'Your own signing secret (`whsec_` and base64 of 24+ random bytes); one is generated when absent.',
      ),
    priority: ProviderFields.priority.default(100),
    enabled: ProviderFields.enabled.default(true),
    timeout_ms: ProviderFields.timeout_ms.default(2000),
  })
  .meta({
    examples: [
      { name: 'CRM', kind: 'http', url: 'https://crm.example.com/switchboard/contacts', priority: 10 },
    ],
  });

export const ContactProviderUpdateSchema = z
  .strictObject({
    name: ProviderFields.name.optional(),
    url: ProviderFields.url.optional(),
    priority: ProviderFields.priority.optional(),
    enabled: ProviderFields.enabled.optional(),
    timeout_ms: ProviderFields.timeout_ms.optional(),
  })
  .meta({ examples: [{ enabled: false }] });

export const {
  list: listContactProviders,
  get: getContactProvider,
  create: createContactProvider,
  update: updateContactProvider,
  remove: deleteContactProvider,
} = collectionRpcs('contact_providers', {
  item: ContactProviderSchema,
  filters: {},
  field: 'provider',
  create: ContactProviderCreateSchema,
  created: ContactProviderWithSecretSchema,
  update: ContactProviderUpdateSchema,
});

// ---- contacts ----

export const FailedProviderSchema = z
  .object({
    id: z.number().int(),
    name: z.string(),
    error: z
      .string()
      .describe('Why its answer is missing: timeout, HTTP status, invalid answer, refused address.'),
  })
  .meta({ id: 'FailedContactProvider' });

export const DirectoryContactSchema = ContactSchema.extend({
  name: z.string().describe('From the provider that ranks first, else the profile name the network sent.'),
  provider: z
    .string()
    .nullable()
    .describe('The provider whose answer is shown; null when only the network knows the customer.'),
  extra: z.unknown().describe('What that provider returned beside the name; null when nothing.'),
}).meta({
  id: 'DirectoryContact',
  examples: [
    {
      wa_id: '4915112345678',
      waba_payload: { profile: { name: 'Ana' }, wa_id: '4915112345678' },
      initials: 'AL',
      last_message_timestamp: 1_763_900_000,
      resolved: false,
      messaging_window_expires_at: 1_763_986_400,
      name: 'Ana Lima',
      provider: 'CRM',
      extra: { customer_id: 'C-1042', tier: 'gold' },
    },
  ],
});
export type DirectoryContact = z.infer<typeof DirectoryContactSchema>;

export const listContacts = chatsRpc('contacts_list', {
  request: withPrincipal({ search: z.string().max(100).optional(), ...PageRequest }),
  response: z.object({
    count: z.number().int(),
    results: z.array(DirectoryContactSchema),
    failed_providers: z.array(FailedProviderSchema),
  }),
});
export const getContact = chatsRpc('contacts_get', {
  request: withPrincipal({ wa_id: WaIdSchema }),
  response: DirectoryContactSchema.extend({ failed_providers: z.array(FailedProviderSchema) }),
});

export const ContactVerificationSchema = z
  .object({
    wa_id: WaIdSchema,
    status: z
      .enum(['valid', 'invalid', 'unknown'])
      .describe('`unknown` where the network offers no contact check (the provider’s Cloud API has none).'),
  })
  .meta({ id: 'ContactVerification', examples: [{ wa_id: '4915112345678', status: 'valid' }] });

export const verifyContact = chatsRpc('contacts_verify', {
  request: withPrincipal({ wa_id: WaIdSchema }),
  response: ContactVerificationSchema,
});

export const ContactBlockSchema = z
  .object({
    wa_id: WaIdSchema,
    blocked: z.boolean(),
    reported: z.boolean().describe('A report was recorded with this action.'),
  })
  .meta({ id: 'ContactBlock', examples: [{ wa_id: '4915112345678', blocked: true, reported: false }] });

export const blockContact = chatsRpc('contacts_block', {
  request: withPrincipal({
    wa_id: WaIdSchema,
    blocked: z.boolean(),
    /** A report: block and record why. */
    report_reason: z.string().min(1).max(1000).optional(),
  }),
  response: ContactBlockSchema,
});

// ---- tags ----

const TagFields = {
  name: z.string().trim().min(1).max(100),
  web_inbox_color: z
    .string()
    .regex(/^#[0-9a-fA-F]{6}$/, 'A colour as #rrggbb.')
    .describe('`#rrggbb`'),
  extra: Extra.optional(),
};
export const TagCreateSchema = z
  .strictObject(TagFields)
  .meta({ examples: [{ name: 'vip', web_inbox_color: '#e91e63' }] });
export const TagUpdateSchema = z
  .strictObject({
    name: TagFields.name.optional(),
    web_inbox_color: TagFields.web_inbox_color.optional(),
    extra: Extra.optional(),
  })
  .meta({ examples: [{ web_inbox_color: '#3f51b5' }] });

export const {
  list: listTags,
  get: getTag,
  create: createTag,
  update: updateTag,
  remove: deleteTag,
} = collectionRpcs('tags', {
  item: TagSchema,
  filters: { search: z.string().max(100).optional() },
  field: 'tag',
  create: TagCreateSchema,
  created: TagSchema,
  update: TagUpdateSchema,
});

// ---- taggings and their history ----

export const TaggingTargetSchema = z.enum(['chat', 'message']);
export type TaggingTarget = z.infer<typeof TaggingTargetSchema>;

export const ChatTaggingSchema = z
  .object({
    id: z.number().int(),
    chat: WaIdSchema,
    tag: z.number().int(),
    created_by: z.number().int().nullable().describe('Id of the user who tagged.'),
    created_at: posixSecondsSchema('when it was tagged.'),
  })
  .meta({
    id: 'ChatTagging',
    examples: [{ id: 7, chat: '4915112345678', tag: 3, created_by: 2, created_at: 1_763_900_000 }],
  });
export const MessageTaggingSchema = z
  .object({
    id: z.number().int(),
    message: z.string(),
    tag: z.number().int(),
    created_by: z.number().int().nullable().describe('Id of the user who tagged.'),
    created_at: posixSecondsSchema('when it was tagged.'),
  })
  .meta({
    id: 'MessageTagging',
    examples: [
      {
        id: 9,
        message: '0f8c2d8e-3b7a-4c59-9a43-1f0d6f6b2a11',
        tag: 3,
        created_by: 2,
        created_at: 1_763_900_000,
      },
    ],
  });

export const ChatTaggingCreateSchema = z
  .strictObject({ chat: WaIdSchema, tag: RowId })
  .meta({ examples: [{ chat: '4915112345678', tag: 3 }] });
export const MessageTaggingCreateSchema = z
  .strictObject({
    message: z.string().min(1).max(200).describe('Our message id (a UUID) or the network’s wamid.'),
    tag: RowId,
  })
  .meta({ examples: [{ message: '0f8c2d8e-3b7a-4c59-9a43-1f0d6f6b2a11', tag: 3 }] });

export const TaggingFiltersSchema = z.object({
  tag: RowId.optional(),
  chat: WaIdSchema.optional(),
  message: z.string().max(200).optional(),
  user: RowId.optional(),
  since: z.number().int().min(0).optional(),
  until: z.number().int().min(0).optional(),
});

export const TaggingEventSchema = z
  .object({
    id: z.number().int(),
    action: z.enum(['added', 'removed']),
    tag: z.number().int(),
    tag_name: z.string().describe('The tag’s name at the time (the tag may be gone).'),
    chat: WaIdSchema,
    message: z
      .string()
      .nullable()
      .describe('The message (message tagging events); null for chat tagging events.'),
    user: z.number().int().nullable().describe('Id of the user who acted.'),
    created_at: posixSecondsSchema('when it happened.'),
  })
  .meta({
    id: 'TaggingEvent',
    examples: [
      {
        id: 12,
        action: 'added',
        tag: 3,
        tag_name: 'vip',
        chat: '4915112345678',
        message: null,
        user: 2,
        created_at: 1_763_900_000,
      },
    ],
  });

export const listChatTaggings = chatsRpc('chat_taggings_list', {
  request: withPrincipal({ chat: WaIdSchema.optional(), tag: RowId.optional(), ...PageRequest }),
  response: foundPage(ChatTaggingSchema),
});
export const createChatTagging = chatsRpc('chat_taggings_create', {
  request: withPrincipal({ tagging: ChatTaggingCreateSchema }),
  response: ChatTaggingSchema,
});
export const deleteChatTagging = chatsRpc('chat_taggings_delete', {
  request: withPrincipal({ id: RowId }),
  response: z.object({ deleted: z.boolean() }),
});
export const listMessageTaggings = chatsRpc('message_taggings_list', {
  request: withPrincipal({ message: z.string().max(200).optional(), tag: RowId.optional(), ...PageRequest }),
  response: foundPage(MessageTaggingSchema),
});
export const createMessageTagging = chatsRpc('message_taggings_create', {
  request: withPrincipal({ tagging: MessageTaggingCreateSchema }),
  response: MessageTaggingSchema,
});
export const deleteMessageTagging = chatsRpc('message_taggings_delete', {
  request: withPrincipal({ id: RowId }),
  response: z.object({ deleted: z.boolean() }),
});
export const listTaggingEvents = chatsRpc('tagging_events_list', {
  request: withPrincipal({ target: TaggingTargetSchema, filters: TaggingFiltersSchema, ...PageRequest }),
  response: foundPage(TaggingEventSchema),
});

// ---- saved responses ----

export const SavedResponseSchema = z
  .object({
    id: z.number().int(),
    name: z.string().describe('The shortcut agents type to find it.'),
    text: z.string(),
    tags: z.array(z.string()),
    created_by: z.number().int().nullable().describe('Id of the author.'),
    created_at: posixSecondsSchema('when it was written.'),
    updated_at: posixSecondsSchema('when it was last changed.'),
  })
  .meta({
    id: 'SavedResponse',
    examples: [
      {
        id: 4,
        name: 'hours',
        text: 'We are open Monday to Friday, 9:00 to 18:00.',
        tags: ['faq'],
        created_by: 2,
        created_at: 1_763_900_000,
        updated_at: 1_763_900_000,
      },
    ],
  });

const SavedResponseFields = {
  name: z.string().trim().min(1).max(100),
  text: z.string().min(1).max(4096),
  tags: z.array(z.string().trim().min(1).max(50)).max(20),
};
export const SavedResponseCreateSchema = z
  .strictObject({ ...SavedResponseFields, tags: SavedResponseFields.tags.default([]) })
  .meta({
    examples: [{ name: 'hours', text: 'We are open Monday to Friday, 9:00 to 18:00.', tags: ['faq'] }],
  });
export const SavedResponseUpdateSchema = z
  .strictObject({
    name: SavedResponseFields.name.optional(),
    text: SavedResponseFields.text.optional(),
    tags: SavedResponseFields.tags.optional(),
  })
  .meta({ examples: [{ text: 'We are open Monday to Saturday, 9:00 to 18:00.' }] });

export const {
  list: listSavedResponses,
  get: getSavedResponse,
  create: createSavedResponse,
  update: updateSavedResponse,
  remove: deleteSavedResponse,
} = collectionRpcs('saved_responses', {
  item: SavedResponseSchema,
  filters: { search: z.string().max(100).optional() },
  field: 'response',
  create: SavedResponseCreateSchema,
  created: SavedResponseSchema,
  update: SavedResponseUpdateSchema,
});
