import { z } from 'zod';

/** A tag as every resource shows it (`tags/`, and the `tags`/`chat_tags` of chats and messages). */
export const TagSchema = z
  .object({
    id: z.number().int(),
    name: z.string(),
    web_inbox_color: z.string(),
    extra: z.unknown(),
    tagging_id: z
      .number()
      .int()
      .nullable()
      .describe(
        'On a chat’s or message’s tags: the tagging that attached it (delete it to untag). Null in `tags/`.',
      ),
  })
  .meta({
    id: 'Tag',
    examples: [{ id: 3, name: 'vip', web_inbox_color: '#e91e63', extra: null, tagging_id: null }],
  });
export type Tag = z.infer<typeof TagSchema>;
