import pRetry, { AbortError } from 'p-retry';
import { request } from 'undici';
import { z } from 'zod';
import { API_KEY_HEADER } from './client.ts';
import { CloudApiErrorBodySchema, NetworkError } from './errors.ts';

/**
 * The provider's partner side, in the shape of 360dialog's Partner API
 * (`https://hub.360dialog.io/api/v2`, docs.360dialog.com "Partner API"): a partner generates a
 * new API key for a client's channel, which revokes the channel's previous keys; and the
 * messaging API's health status (`GET /health_status`, docs.360dialog.com "Health"; Meta's
 * `health_status` node with its `PHONE_NUMBER` and `WABA` entities) names the number a key
 * belongs to. The sandbox serves both, with the number's phone number id as channel id.
 */
export const PROVIDER_HUB_BASE_URL = 'https://hub.360dialog.io/api/v2';
export const PARTNER_HUB_KEY_HEADER = 'x-api-key';

export const ChannelApiKeySchema = z
  .object({
    id: z.string(),
    api_key: z.string().min(1),
    address: z.string(),
    app_id: z.string(),
  })
  .meta({ id: 'ChannelApiKey' });
export type ChannelApiKey = z.infer<typeof ChannelApiKeySchema>;

export const HealthEntitySchema = z.object({
  entity_type: z.enum(['PHONE_NUMBER', 'WABA', 'BUSINESS', 'APP']),
  id: z.string(),
  can_send_message: z.enum(['AVAILABLE', 'LIMITED', 'BLOCKED']),
});

export const HealthStatusSchema = z
  .object({
    health_status: z.object({
      can_send_message: z.enum(['AVAILABLE', 'LIMITED', 'BLOCKED']),
      entities: z.array(HealthEntitySchema),
    }),
    display_phone_number: z.string().optional(),
    id: z.string().optional(),
  })
  .meta({ id: 'HealthStatus' });
export type HealthStatus = z.infer<typeof HealthStatusSchema>;

/** What a provider key says about its number. */
export interface KeyOwner {
  phoneNumberId: string;
  displayPhoneNumber: string | undefined;
}

export interface PartnerHubClient {
  /** A new key for the channel; the channel's previous key stops working. */
  createChannelApiKey(channelId: string): Promise<ChannelApiKey>;
  /** The number a provider API key belongs to (a `NetworkError` with status 401 for an unknown key). */
  keyOwner(providerApiKey: string): Promise<KeyOwner>;
}

export interface PartnerHubClientOptions {
  /** The partner hub (`PROVIDER_HUB_BASE_URL`); the sandbox's URL in development and tests. */
  hubUrl: string;
  /** The messaging API (`PROVIDER_BASE_URL`); the sandbox's URL in development and tests. */
  networkUrl: string;
  partnerId: string;
  /** The partner's hub API key (`x-api-key`). */
  hubApiKey: string;
  retries?: number;
  timeoutMs?: number;
}

/** 429, 5xx and lost connections are retried; any other failure is the answer. */
export function createPartnerHubClient(opts: PartnerHubClientOptions): PartnerHubClient {
  const timeoutMs = opts.timeoutMs ?? 15_000;

  async function call<S extends z.ZodType>(
    operation: string,
    url: string,
    init: { method: 'GET' | 'POST'; headers: Record<string, string> },
    schema: S,
  ): Promise<z.output<S>> {
    return pRetry(
      async () => {
        const res = await request(url, {
          method: init.method,
          headers: { accept: 'application/json', ...init.headers },
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
        });
        const text = await res.body.text();
        const body: unknown = text ? JSON.parse(text) : undefined;
        if (res.statusCode >= 200 && res.statusCode < 300) return schema.parse(body);
        const parsed = CloudApiErrorBodySchema.safeParse(body);
        const error = new NetworkError({
          kind: 'api',
          operation,
          status: res.statusCode,
          ...(parsed.success && { code: parsed.data.error.code }),
          message: parsed.success ? parsed.data.error.message : `${operation} answered ${res.statusCode}`,
          body,
        });
        if (res.statusCode === 429 || res.statusCode >= 500) throw error;
        throw new AbortError(error);
      },
      { retries: opts.retries ?? 3, minTimeout: 300, maxTimeout: 5_000 },
    );
  }

  return {
    createChannelApiKey(channelId) {
      const url = `${opts.hubUrl}/partners/${encodeURIComponent(opts.partnerId)}/channels/${encodeURIComponent(channelId)}/api_keys`;
      return call(
        'partner_hub.create_api_key',
        url,
        { method: 'POST', headers: { [PARTNER_HUB_KEY_HEADER]: opts.hubApiKey } },
        ChannelApiKeySchema,
      );
    },
    async keyOwner(providerApiKey) {
      const status = await call(
        'network.health_status',
        `${opts.networkUrl}/health_status?fields=display_phone_number`,
        { method: 'GET', headers: { [API_KEY_HEADER]: providerApiKey } },
        HealthStatusSchema,
      );
      const phone = status.health_status.entities.find((e) => e.entity_type === 'PHONE_NUMBER');
      if (!phone) {
        throw new NetworkError({
          kind: 'invalid_response',
          operation: 'network.health_status',
          status: 200,
          message: 'the key names no phone number',
        });
      }
      return { phoneNumberId: phone.id, displayPhoneNumber: status.display_phone_number };
    },
  };
}
