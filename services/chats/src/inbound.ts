import type { Logger } from '@switchboard/kit';
import { type Bus, type Consumption, consumers } from '@switchboard/proto';
import type { Kysely } from 'kysely';
import type { ChatsDatabase } from './db.ts';

/**
 * Consumes the instance's inbound stream and stores each network webhook body once.
 * The stream sequence makes the insert idempotent, so a redelivery after a crash is harmless.
 */
export async function startInboundConsumer(deps: {
  bus: Bus;
  db: Kysely<ChatsDatabase>;
  log: Logger;
}): Promise<Consumption> {
  return deps.bus.consume(
    consumers.chatsInbound,
    async (msg, ctx) => {
      await deps.db
        .insertInto('network_webhooks')
        .values({
          stream_seq: ctx.seq,
          received_at: new Date(msg.received_at),
          signature_verified: msg.signature_verified,
          body: msg.body,
        })
        .onConflict((oc) => oc.column('stream_seq').doNothing())
        .execute();
      ctx.span.setAttribute('switchboard.stream_seq', ctx.seq);
      return undefined;
    },
    { onError: (err, at) => deps.log.error({ err, ...at }, 'inbound webhook not processed') },
  );
}
