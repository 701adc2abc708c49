import { request } from 'undici';
import { z } from 'zod';
import { API_KEY_HEADER } from './client.ts';
import { NetworkError } from './errors.ts';

/**
 * The network's contact check: does a number have a WhatsApp account? Meta's On-Premises API
 * has it as `POST /v1/contacts` (`{"blocking":"wait","contacts":["+4915…"],"force_check":true}`
 * → `{"contacts":[{"input","status":"valid"|"invalid","wa_id"?}]}`; On-Premises API reference,
 * "Contacts"). The Cloud API, which the provider proxies, has no such call and answers 404 for
 * the path: then the outcome is `unknown`, never an error. The sandbox serves the call.
 */
export const ContactCheckRequestSchema = z.strictObject({
  blocking: z.enum(['wait', 'no_wait']),
  contacts: z.array(z.string().min(1).max(30)).min(1).max(1000),
  force_check: z.boolean().optional(),
});
export type ContactCheckRequest = z.infer<typeof ContactCheckRequestSchema>;

export const ContactCheckResponseSchema = z.looseObject({
  contacts: z.array(
    z.looseObject({
      input: z.string(),
      status: z.enum(['valid', 'invalid', 'processing']),
      wa_id: z.string().optional(),
    }),
  ),
});
export type ContactCheckResponse = z.infer<typeof ContactCheckResponseSchema>;

export type ContactCheckStatus = 'valid' | 'invalid' | 'unknown';

export interface ContactCheckClient {
  /** `unknown` where the network has no contact check (404/405) or is still processing. */
  check(waId: string): Promise<ContactCheckStatus>;
}

/** The contact check of one business number, with the same key and base URL as the messaging client. */
export function createContactCheckClient(opts: {
  baseUrl: string;
  apiKey: string;
  timeoutMs?: number;
}): ContactCheckClient {
  const url = new URL(`${new URL(opts.baseUrl).pathname.replace(/\/+$/, '')}/v1/contacts`, opts.baseUrl);
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const operation = 'checkContacts';
  return {
    async check(waId) {
      const body: ContactCheckRequest = { blocking: 'wait', contacts: [`+${waId}`], force_check: true };
      let res: Awaited<ReturnType<typeof request>>;
      try {
        res = await request(url, {
          method: 'POST',
          headers: {
            [API_KEY_HEADER]: opts.apiKey,
            'content-type': 'application/json',
            accept: 'application/json',
          },
          body: JSON.stringify(body),
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
        });
      } catch (err) {
        throw new NetworkError({
          kind: 'connection',
          operation,
          message: `${operation}: no answer from the network (${err instanceof Error ? err.message : String(err)})`,
          cause: err,
        });
      }
      const text = await res.body.text();
      if (res.statusCode === 404 || res.statusCode === 405) return 'unknown';
      if (res.statusCode < 200 || res.statusCode >= 300) {
        throw new NetworkError({
          kind: 'api',
          operation,
          status: res.statusCode,
          message: `${operation}: HTTP ${res.statusCode}`,
          body: text.slice(0, 2000),
        });
      }
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      const parsed = ContactCheckResponseSchema.safeParse(json);
      if (!parsed.success) {
        throw new NetworkError({
          kind: 'invalid_response',
          operation,
          status: res.statusCode,
          message: `${operation}: the answer does not match the contacts schema`,
          body: text.slice(0, 2000),
        });
      }
      const found = parsed.data.contacts[0];
      if (!found || found.status === 'processing') return 'unknown';
      return found.status;
    },
  };
}
