import { envBoolean, envPort, logLevel, parseEnv } from '@switchboard/kit';
import { InstanceIdSchema } from '@switchboard/proto';
import { z } from 'zod';

export const GatewayConfigSchema = z.object({
  HOST: z.string().default('127.0.0.1'),
  PORT: envPort.default(8000),
  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }),
  NATS_URL: z.string().min(1).default('nats://127.0.0.1:4222'),
  INSTANCE_ID: InstanceIdSchema.default('local'),
  LOG_LEVEL: logLevel,
  /** The network's app secret: when set, `X-Hub-Signature-256` is required and checked on every webhook POST. */
  WABA_WEBHOOK_SECRET: z.string().min(1).optional(),
  /** Echoed back in the Meta verify handshake (`hub.verify_token`). */
  WABA_VERIFY_TOKEN: z.string().min(1).optional(),
  /** Public base URL of this inbox (links in responses, the webhook URL registered with the network). */
  PUBLIC_URL: z.url().optional(),
  HIDE_API_LINKS: envBoolean.default(false),
});

export type GatewayConfig = z.infer<typeof GatewayConfigSchema>;

export function loadConfig(env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  return parseEnv(GatewayConfigSchema, env);
}
