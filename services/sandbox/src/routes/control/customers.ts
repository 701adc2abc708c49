import type { HttpServer } from '@switchboard/kit';
import { failures } from '../../domain/failure.ts';
import { ensureCustomer, numberNowSeconds, type SandboxState } from '../../store/store.ts';
import type { InboundEngine } from '../../use-cases/inbound.ts';
import { controlNumber } from '../network-auth.ts';
import {
  CustomerMessageRequestSchema,
  CustomerMessageResponseSchema,
  CustomerPatchSchema,
  CustomerSchema,
  numberControlRoute,
  ReceivedListSchema,
  WaIdParams,
} from './schemas.ts';
import { customerView, receivedView } from './views.ts';

export function registerCustomerRoutes(
  app: HttpServer,
  deps: { state: SandboxState; inbound: InboundEngine },
): void {
  app.post(
    '/sandbox/customers/:wa_id/messages',
    numberControlRoute({
      params: WaIdParams,
      summary: 'A customer sends a message',
      description:
        'Any inbound type (text, image, audio, video, document, sticker, location, contacts, interactive ' +
        'button_reply/list_reply, button, reaction, order, system, unsupported, unknown) with sample content for ' +
        'anything left out. Optional `profile_name`, ad `referral` (opens a 72-hour window), `context` and a ' +
        'backdated `timestamp` (delivered now, like a late network delivery). The sandbox posts the signed ' +
        'webhook and answers the wamid. The number is the one owning `D360-API-KEY`, or `?phone_number_id=`, ' +
        'else the seed number.',
      body: CustomerMessageRequestSchema,
      response: { 200: CustomerMessageResponseSchema },
    }),
    async (req) => {
      const number = controlNumber(deps.state, req);
      return deps.inbound.receive(number, req.params.wa_id, req.body);
    },
  );

  app.get(
    '/sandbox/customers/:wa_id/received',
    numberControlRoute({
      params: WaIdParams,
      summary: 'What the business sent to a customer',
      description:
        'Every accepted message to this customer, oldest first, with each status as it was posted.',
      response: { 200: ReceivedListSchema },
    }),
    async (req) => {
      const number = controlNumber(deps.state, req);
      const customer = number.customers.get(req.params.wa_id);
      const messages = (customer?.received ?? []).flatMap((id) => {
        const sent = number.sent.get(id);
        return sent ? [receivedView(sent, number)] : [];
      });
      return { wa_id: req.params.wa_id, messages };
    },
  );

  app.get(
    '/sandbox/customers/:wa_id',
    numberControlRoute({
      params: WaIdParams,
      summary: 'Read a customer’s settings and window',
      response: { 200: CustomerSchema },
    }),
    async (req) => {
      const number = controlNumber(deps.state, req);
      const customer = number.customers.get(req.params.wa_id);
      if (!customer) throw failures.notFound(req.params.wa_id);
      return customerView(number, customer, numberNowSeconds(deps.state, number));
    },
  );

  app.patch(
    '/sandbox/customers/:wa_id',
    numberControlRoute({
      params: WaIdParams,
      summary: 'Change a customer’s settings',
      description:
        '`undeliverable` (messages fail with 131026), `never_reads` (statuses stop at delivered), `blocked` (the customer blocked the business: messages fail with 131026), `profile_name`.',
      body: CustomerPatchSchema,
      response: { 200: CustomerSchema },
    }),
    async (req) => {
      const number = controlNumber(deps.state, req);
      const customer = ensureCustomer(number, req.params.wa_id);
      const b = req.body;
      if (b.profile_name !== undefined) customer.profileName = b.profile_name;
      if (b.undeliverable !== undefined) customer.undeliverable = b.undeliverable;
      if (b.never_reads !== undefined) customer.neverReads = b.never_reads;
      if (b.blocked !== undefined) customer.blockedBusiness = b.blocked;
      return customerView(number, customer, numberNowSeconds(deps.state, number));
    },
  );
}
