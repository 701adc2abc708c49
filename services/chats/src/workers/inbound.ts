import { createHash } from 'node:crypto';
import type { Logger } from '@switchboard/kit';
import {
  type ClassifiedFailure,
  classifyFailure,
  consumers,
  type NetworkEvent,
  networkEvent,
  networkMediaCopyId,
  networkMediaEvent,
} from '@switchboard/proto';
import type { Bus, Consumption, DeliveryContext, Disposition } from '@switchboard/proto/bus';
import type { Kysely } from 'kysely';
import type { ChatsDatabase } from '../db.ts';
import { createKeyedQueue } from '../domain/keyed-queue.ts';
import { carriesCustomerFiles, type ParsedBody, parseNetworkBody } from '../domain/network-body.ts';
import { createOrderGate } from '../domain/order-gate.ts';
import { backoffMs, INBOUND_RETRY_POLICY, retryDecision } from '../domain/retry.ts';
import { storableJsonText } from '../domain/storable.ts';
import { recordDeadLetter } from '../store/dead-letters.ts';
import { createIngestBatcher } from './ingest-batcher.ts';

/** A later body of a customer whose earlier one waits for its retry comes again this long after it. */
const ORDER_GATE_STEP_MS = 50;
/** A pending body not back this long after its retry was due went to another worker. */
const ORDER_GATE_SLACK_MS = 30_000;

/** Customers a body names, first the one it is about. */
function customersOf(parsed: ParsedBody | null): string[] {
  const waIds = new Set<string>();
  for (const m of parsed?.messages ?? []) waIds.add(m.from);
  for (const s of parsed?.statuses ?? []) waIds.add(s.recipient);
  for (const c of parsed?.contacts ?? []) waIds.add(c.wa_id);
  return [...waIds];
}

function eventOf(body: string, parsed: ParsedBody | null, receivedAt: number): Omit<NetworkEvent, 'chats'> {
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
 *
 * The gateway's 200 to the network is a promise, so no body is ever dropped: a transient
 * failure (database or NATS down, a lost connection, a serialization failure) is retried
 * without limit with capped backoff; a body that can never be processed (a data exception, a
 * bug, or an unknown failure that persisted) is kept in `inbound_dead_letters` with its error,
 * recorded in the event log, and acknowledged, so it never holds the stream up.
 *
 * A retried body waits with a delayed nak (it holds no handler meanwhile), and the customer's
 * later bodies wait behind it (`domain/order-gate.ts`): the retry delays are jittered and
 * redeliveries come in any order, yet `ordered` webhooks rely on per-customer order.
 */
export async function startInboundConsumer(deps: {
  bus: Bus;
  db: Kysely<ChatsDatabase>;
  log: Logger;
  /** Test hook `CHATS_TEST_FAIL_WA_IDS`; empty in production. */
  failFor?: ReadonlyMap<string, string>;
}): Promise<Consumption> {
  const { bus, db, log } = deps;
  const perCustomer = createKeyedQueue();
  const batcher = createIngestBatcher(db, { failFor: deps.failFor });
  const order = createOrderGate({ slackMs: ORDER_GATE_SLACK_MS });

  async function giveUp(
    f: ClassifiedFailure,
    msg: { body: string; received_at: number; signature_verified: boolean },
    parsed: ParsedBody | null,
    ctx: DeliveryContext,
  ): Promise<Disposition | undefined> {
    try {
      const id = await recordDeadLetter(db, {
        streamSeq: ctx.seq,
        receivedAt: msg.received_at,
        signatureVerified: msg.signature_verified,
        body: Buffer.from(msg.body, 'utf8'),
        waIds: customersOf(parsed),
        error: f.message,
        errorCode: f.code,
        attempts: ctx.deliveryCount,
        redrivable: true,
      });
      ctx.span.setAttribute('switchboard.dead_letter_id', id ?? -1);
      log.error(
        { seq: ctx.seq, dead_letter_id: id, failure: f.class, code: f.code, error: f.message },
        'inbound body cannot be processed; kept as a dead letter',
      );
      return undefined;
    } catch (err) {
      // Not even the dead letter could be written (the database is down): try again later.
      log.error({ err, seq: ctx.seq }, 'inbound dead letter not recorded; retried');
      return { kind: 'nak', delayMs: backoffMs(ctx.deliveryCount, INBOUND_RETRY_POLICY) };
    }
  }

  /** Stores a body and hands it to the fan-out; throws what failed. */
  async function ingest(
    msg: { body: string; received_at: number; signature_verified: boolean },
    storableJson: string | null,
    parsed: ParsedBody | null,
    ctx: DeliveryContext,
  ): Promise<void> {
    const base = eventOf(msg.body, parsed, msg.received_at);
    const { result, chats } = await batcher.fold({
      raw: {
        streamSeq: ctx.seq,
        receivedAt: msg.received_at,
        signatureVerified: msg.signature_verified,
        body: msg.body,
        storableJson,
      },
      parsed,
      waIds: base.wa_ids,
    });
    if (result !== 'already_stored') {
      ctx.span.setAttribute('switchboard.messages_stored', result.storedMessages);
      ctx.span.setAttribute('switchboard.statuses_stored', result.storedStatuses);
    }
    if (!parsed) {
      log.warn({ seq: ctx.seq }, 'network webhook is not a messages body; kept and forwarded as is');
    } else if (parsed.ignored) {
      log.warn(
        { seq: ctx.seq, ignored: parsed.ignored },
        'network webhook names customers that are not wa_ids; those items are kept in the body only',
      );
    }
    const event: NetworkEvent = { ...base, chats };
    // The media service's copy only for bodies with customers' files: every status and
    // text stays off its durable. Both are published (again, for a redelivered body)
    // before the body is acknowledged; JetStream keeps one of each by its id.
    await Promise.all([
      bus.publish(networkEvent, event, { idempotencyKey: event.event_id }),
      ...(carriesCustomerFiles(parsed)
        ? [
            bus.publish(networkMediaEvent, event, {
              idempotencyKey: networkMediaCopyId(event.event_id),
            }),
          ]
        : []),
    ]);
  }

  return bus.consume(
    consumers.chatsInbound,
    async (msg, ctx) => {
      // Everything a body may legally contain must be storable: jsonb and text get a copy
      // with `\u0000` and unpaired surrogates replaced; the raw bytes and the fan-out keep
      // the original.
      const storableJson = storableJsonText(msg.body);
      const parsed = storableJson === null ? null : parseNetworkBody(storableJson);
      // In stream order per customer within this worker; across workers the writes are
      // commutative, so order still cannot change the result.
      const customer = customersOf(parsed)[0] ?? '';
      // The event is published inside the queue too, so per customer the fan-out sees the
      // stream's order (what `ordered` webhooks rely on).
      return perCustomer.run(customer, async (): Promise<Disposition | undefined> => {
        const settled = (d: Disposition | undefined): Disposition | undefined => {
          if (d?.kind === 'nak' && customer) order.pend(customer, ctx.seq, d.delayMs);
          else order.done(customer, ctx.seq);
          return d;
        };
        const earlier = customer ? order.blockedBy(customer, ctx.seq) : undefined;
        if (earlier) {
          ctx.span.setAttribute('switchboard.waits_for_seq', earlier.seq);
          return settled({ kind: 'nak', delayMs: Math.min(5_000, earlier.dueInMs + ORDER_GATE_STEP_MS) });
        }
        try {
          await ingest(msg, storableJson, parsed, ctx);
          return settled(undefined);
        } catch (err) {
          const f = classifyFailure(err);
          ctx.span.recordException(err instanceof Error ? err : new Error(String(err)));
          ctx.span.setAttribute('switchboard.failure_class', f.class);
          const decision = retryDecision(f.class, ctx.deliveryCount, INBOUND_RETRY_POLICY);
          if (decision.action === 'give_up') return settled(await giveUp(f, msg, parsed, ctx));
          // One line per outage and body, not one per retry.
          if (ctx.deliveryCount === 1 || ctx.deliveryCount % 10 === 0) {
            log.warn(
              { seq: ctx.seq, attempt: ctx.deliveryCount, failure: f.class, code: f.code, error: f.message },
              'inbound body not stored yet; retried',
            );
          }
          return settled({ kind: 'nak', delayMs: decision.delayMs });
        }
      });
    },
    {
      onError: (err, at) => log.error({ err, ...at }, 'inbound webhook not processed'),
      // A stream message that is not a webhook envelope at all: kept, never re-driven.
      onMalformed: async (data, err, at) => {
        await recordDeadLetter(db, {
          streamSeq: at.seq,
          receivedAt: Date.now(),
          signatureVerified: false,
          body: data,
          waIds: [],
          error: err.message,
          errorCode: err.name,
          attempts: at.deliveryCount,
          redrivable: false,
        });
      },
      onPullError: (err) => log.warn({ err }, 'inbound stream not reachable; pulling again'),
    },
  );
}
