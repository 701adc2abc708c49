import type { HttpServer } from '@switchboard/kit';
import { ContactCheckRequestSchema, ContactCheckResponseSchema, normalizeRecipient } from '../domain/wire.ts';
import type { BusinessNumber } from '../store/model.ts';
import type { SandboxState } from '../store/store.ts';
import { networkRoute, numberOf } from './network-auth.ts';

/**
 * A number has an account here when the sandbox knows it as a customer of this business
 * number and messages to it can be delivered (`undeliverable` customers have none).
 */
function statusOf(
  number: BusinessNumber,
  input: string,
): { input: string; status: 'valid' | 'invalid'; wa_id?: string } {
  const waId = normalizeRecipient(input);
  const customer = waId.length >= 5 ? number.customers.get(waId) : undefined;
  return customer && !customer.undeliverable
    ? { input, status: 'valid', wa_id: waId }
    : { input, status: 'invalid' };
}

/**
 * `POST /v1/contacts`: the contact check of Meta's On-Premises API, which the provider's Cloud
 * API lacks (it answers 404 there). The sandbox serves it so the inbox's `verify/` can be tried.
 */
export function registerContactRoutes(app: HttpServer, deps: { state: SandboxState }): void {
  app.post(
    '/v1/contacts',
    networkRoute(deps.state, {
      tags: ['contacts'],
      summary: 'Check whether numbers have a WhatsApp account',
      description:
        'On-Premises API style contact check (`blocking: "wait"`). A number is `valid` when the sandbox knows it as ' +
        'a customer that can receive messages, `invalid` otherwise. The provider’s Cloud API has no such call.',
      body: ContactCheckRequestSchema,
      response: { 200: ContactCheckResponseSchema },
    }),
    async (req) => {
      const number = numberOf(req);
      return { contacts: req.body.contacts.map((c) => statusOf(number, c)) };
    },
  );
}
