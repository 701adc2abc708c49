import { type ChatsConfig, ChatsConfigSchema } from '@switchboard/chats';
import { type FanoutConfig, FanoutConfigSchema } from '@switchboard/fanout';
import { type GatewayConfig, GatewayConfigSchema } from '@switchboard/gateway';
import { configLoader } from '@switchboard/kit';
import { type MediaConfig, MediaConfigSchema } from '@switchboard/media';
import { z } from 'zod';

export interface InboxConfig {
  gateway: GatewayConfig;
  chats: ChatsConfig;
  fanout: FanoutConfig;
  media: MediaConfig;
}

/**
 * The environment of the single process: the union of the gateway's, chats', fanout's and media's, with
 * the same variable names as the separate processes (one `DATABASE_URL`, `NATS_URL`,
 * `INSTANCE_ID`, `INBOX_SECRET_KEY`, … for all three). Each service reads its part with its own
 * schema; every problem is reported once per variable (the messages of the services that
 * refuse it, joined).
 */
export const InboxConfigSchema = z.looseObject({}).transform((env, ctx): InboxConfig => {
  const parts = {
    gateway: GatewayConfigSchema.safeParse(env),
    chats: ChatsConfigSchema.safeParse(env),
    fanout: FanoutConfigSchema.safeParse(env),
    media: MediaConfigSchema.safeParse(env),
  };
  const problems = new Map<string, { path: PropertyKey[]; messages: Set<string> }>();
  for (const part of Object.values(parts)) {
    for (const issue of part.error?.issues ?? []) {
      const key = issue.path.map(String).join('.');
      const entry = problems.get(key) ?? { path: issue.path, messages: new Set<string>() };
      entry.messages.add(issue.message);
      problems.set(key, entry);
    }
  }
  for (const { path, messages } of problems.values()) {
    ctx.addIssue({ code: 'custom', path, message: [...messages].join('; ') });
  }
  const { gateway, chats, fanout, media } = parts;
  if (!gateway.success || !chats.success || !fanout.success || !media.success) return z.NEVER;
  // The media service makes `file` URLs under the inbox's own public URL. Its port is internal
  // here (the gateway in this process is told where it is), so unless MEDIA_PORT is given it
  // takes a free one: several instances on one host (the local runtime) must not collide.
  return {
    gateway: gateway.data,
    chats: chats.data,
    fanout: fanout.data,
    media: {
      ...media.data,
      PUBLIC_URL: gateway.data.PUBLIC_URL,
      MEDIA_PORT: 'MEDIA_PORT' in env && env.MEDIA_PORT !== undefined ? media.data.MEDIA_PORT : 0,
    },
  };
});

export const loadConfig = configLoader(InboxConfigSchema);
