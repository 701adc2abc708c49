import { logLevel, parseEnv } from '@switchboard/kit';
import { InstanceIdSchema } from '@switchboard/proto';
import { z } from 'zod';

export const ChatsConfigSchema = z.object({
  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }),
  NATS_URL: z.string().min(1).default('nats://127.0.0.1:4222'),
  INSTANCE_ID: InstanceIdSchema.default('local'),
  LOG_LEVEL: logLevel,
});

export type ChatsConfig = z.infer<typeof ChatsConfigSchema>;

export function loadConfig(env: NodeJS.ProcessEnv = process.env): ChatsConfig {
  return parseEnv(ChatsConfigSchema, env);
}
