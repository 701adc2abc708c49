/**
 * JetStream publishes of raw text to any subject, as proto's bus makes them (one reply inbox,
 * the calls of one event-loop turn in one socket write, the PubAck read by the bus's own rule),
 * for the benches' floors, whose streams have no contract.
 */
import { headers, type MsgHdrs, type NatsConnection } from '@nats-io/nats-core';
import { createReplyMux, createWriteCoalescer, pubAckOf } from '@switchboard/proto/bus';

export type JetStreamPublisher = (
  subject: string,
  data: string,
  msgId?: string,
) => Promise<ReturnType<typeof pubAckOf>>;

export function createJetStreamPublisher(nc: NatsConnection): JetStreamPublisher {
  const replies = createReplyMux(nc);
  const coalesced = createWriteCoalescer();
  const encoder = new TextEncoder();
  return async (subject, data, msgId) => {
    let h: MsgHdrs | undefined;
    if (msgId !== undefined) {
      h = headers();
      h.set('Nats-Msg-Id', msgId);
    }
    const reply = await coalesced(() =>
      replies.request(subject, encoder.encode(data), { ...(h && { headers: h }), timeoutMs: 5_000 }),
    );
    return pubAckOf(reply);
  };
}
