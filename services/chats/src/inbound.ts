import { createHash } from 'node:crypto';
import type { Logger } from '@switchboard/kit';
import { type Bus, type Consumption, consumers, type NetworkEvent, networkEvent } from '@switchboard/proto';
import type { Kysely } from 'kysely';
import type { ChatsDatabase } from './db.ts';
import { createKeyedQueue } from './domain/keyed-queue.ts';
import { type ParsedBody, parseNetworkBody } from './domain/network-body.ts';
import { storeNetworkWebhook } from './store/ingest.ts';

function eventOf(body: string, parsed: ParsedBody | null, receivedAt: number): NetworkEvent {
  const kinds: NetworkEvent['kinds'] = [];
  if (parsed?.messages.length) kinds.push('message');
  if (parsed?.statuses.length) kinds.push('status');
  if (!kinds.length) kinds.push('other');
  const waIds = new Set<string>();
  for (const c of parsed?.contacts ?? []) waIds.add(c.wa_id);
  for (const m of parsed?.messages ?? []) waIds.add(m.from);
  for (const s of parsed?.statuses ?? []) waIds.add(s.recipient);
  return {
    // The same body always makes the same event: redeliveries fan out once.
    event_id: createHash('sha256').update(body).digest('hex'),
    kinds,
    wa_ids: [...waIds],
    received_at: receivedAt,
    body,
  };
}

/**
 * Consumes the instance's inbound stream: keeps the body as received, folds its messages and
 * statuses into persons, chats and messages, then hands the body to the fan-out. Every step
 * is idempotent, so a redelivery after a crash at any point converges on the same state.
 */
export async function startInboundConsumer(deps: {
  bus: Bus;
  db: Kysely<ChatsDatabase>;
  log: Logger;
}): Promise<Consumption> {
  const { bus, db, log } = deps;
  const perCustomer = createKeyedQueue();
  return bus.consume(
    consumers.chatsInbound,
    async (msg, ctx) => {
      const parsed = parseNetworkBody(msg.body);
      // In stream order per customer within this worker; across workers the writes are
      // commutative, so order still cannot change the result.
      const customer =
        parsed?.messages[0]?.from ?? parsed?.statuses[0]?.recipient ?? parsed?.contacts[0]?.wa_id ?? '';
      // The event is published inside the queue too, so per customer the fan-out sees the
      // stream's order (what `ordered` webhooks rely on).
      await perCustomer.run(customer, async () => {
        const result = await storeNetworkWebhook(
          db,
          {
            streamSeq: ctx.seq,
            receivedAt: msg.received_at,
            signatureVerified: msg.signature_verified,
            body: msg.body,
          },
          parsed,
        );
        if (result !== 'already_stored') {
          ctx.span.setAttribute('switchboard.messages_stored', result.storedMessages);
          ctx.span.setAttribute('switchboard.statuses_stored', result.storedStatuses);
        }
        if (!parsed) {
          log.warn({ seq: ctx.seq }, 'network webhook is not a messages body; kept and forwarded as is');
        }
        const event = eventOf(msg.body, parsed, msg.received_at);
        await bus.publish(networkEvent, event, { idempotencyKey: event.event_id });
      });
      return undefined;
    },
    { onError: (err, at) => log.error({ err, ...at }, 'inbound webhook not processed') },
  );
}
