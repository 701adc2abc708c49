import { randomUUID } from 'node:crypto';
import { createGuardedAgent, standardWebhookHeaders } from '@switchboard/kit';
import { issuesText } from '@switchboard/proto';
import { z } from 'zod';
import type { ProviderContact } from '../domain/contact-merge.ts';

/**
 * The `http` contact provider protocol (the chats README has the full description): one signed
 * JSON POST to the provider's URL per question, `{"type":"search","query","limit"}` or
 * `{"type":"lookup","wa_id"}`, answered `{"contacts":[{"wa_id","name","extra"?}]}`. Signed like
 * per-user webhook deliveries (Standard Webhooks headers, the provider's `whsec_` secret).
 */
export type ProviderQuestion =
  | { type: 'search'; query: string; limit: number }
  | { type: 'lookup'; wa_id: string };

export const ProviderAnswerSchema = z.object({
  contacts: z
    .array(
      z.object({
        wa_id: z.string().min(1).max(40),
        name: z.string().max(200),
        extra: z.unknown().optional(),
      }),
    )
    .max(500),
});

export interface ProviderTarget {
  id: number;
  url: string;
  secret: string;
  timeoutMs: number;
}

/** Why a provider gave no usable answer; the message is shown to API clients. */
export class ProviderFailure extends Error {
  override readonly name = 'ProviderFailure';
}

export interface ContactProviderClient {
  ask(target: ProviderTarget, question: ProviderQuestion): Promise<ProviderContact[]>;
  close(): Promise<void>;
}

/**
 * A wa_id as digits only, no plus (`+49 151-1234` → `491511234`); the international call prefix
 * `00` counts as `+`. Null when that is no wa_id: too short or long, or a national number (a
 * leading 0, whose country is unknown).
 */
export function normaliseWaId(input: string): string | null {
  let digits = input.replace(/\D/g, '');
  if (digits.startsWith('00')) digits = digits.slice(2);
  return /^[1-9]\d{4,19}$/.test(digits) ? digits : null;
}

export function createHttpContactProviderClient(opts: {
  allowPrivateTargets: boolean;
}): ContactProviderClient {
  // Provider URLs are user-given: every connection passes the SSRF guard.
  const agent = createGuardedAgent({
    allowPrivateTargets: opts.allowPrivateTargets,
    connectTimeoutMs: 5_000,
    maxResponseBytes: 1024 * 1024,
  });

  return {
    async ask(target, question) {
      const url = new URL(target.url);
      const body = JSON.stringify(question);
      const id = `msg_${randomUUID()}`;
      let status: number;
      let text: string;
      try {
        const res = await agent.request({
          origin: url.origin,
          path: `${url.pathname}${url.search}`,
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json',
            ...standardWebhookHeaders([target.secret], id, body),
          },
          body,
          headersTimeout: target.timeoutMs,
          bodyTimeout: target.timeoutMs,
          signal: AbortSignal.timeout(target.timeoutMs),
        });
        status = res.statusCode;
        text = await res.body.text();
      } catch (err) {
        const name = err instanceof Error ? err.name : '';
        if (name === 'TimeoutError' || name === 'AbortError' || /Timeout/.test(name)) {
          throw new ProviderFailure(`no answer within ${target.timeoutMs} ms`);
        }
        if (name === 'ResponseExceededMaxSizeError') throw new ProviderFailure('answered more than 1 MB');
        throw new ProviderFailure(`not reachable (${err instanceof Error ? err.message : String(err)})`);
      }
      if (status !== 200) throw new ProviderFailure(`answered HTTP ${status}`);
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        throw new ProviderFailure('answered something that is not JSON');
      }
      const parsed = ProviderAnswerSchema.safeParse(json);
      if (!parsed.success) {
        throw new ProviderFailure(`answered outside the protocol (${issuesText(parsed.error.issues, 3)})`);
      }
      return parsed.data.contacts.flatMap((c) => {
        const waId = normaliseWaId(c.wa_id);
        return waId ? [{ wa_id: waId, name: c.name, extra: c.extra ?? null }] : [];
      });
    },
    async close() {
      await agent.close();
    },
  };
}
