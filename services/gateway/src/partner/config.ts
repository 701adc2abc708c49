import { configLoader, envBoolean, envPort, envTrustProxy, logLevel } from '@switchboard/kit';
import { z } from 'zod';

/** The gateway in partner mode: no database of its own, the provisioner behind the bus. */
export const PartnerGatewayConfigSchema = z.object({
  NATS_URL: z.string().min(1).default('nats://127.0.0.1:4222'),
  LOG_LEVEL: logLevel,
  HOST: z.string().default('127.0.0.1'),
  PORT: envPort.default(8010),
  TRUST_PROXY: envTrustProxy,
  /** Signs the session cookie's JWT (HS256). Keep it stable and secret; at least 32 characters. */
  PARTNER_SESSION_SECRET: z.string().min(32, 'use at least 32 random characters'),
  PARTNER_SESSION_TTL_SECONDS: z.coerce
    .number()
    .int()
    .positive()
    .default(12 * 3600),
  /** `Secure` on the session cookie: on behind HTTPS, off for plain-HTTP local runs. */
  PARTNER_COOKIE_SECURE: envBoolean.default(false),
});

export type PartnerGatewayConfig = z.infer<typeof PartnerGatewayConfigSchema>;

export const loadPartnerConfig = configLoader(PartnerGatewayConfigSchema);
