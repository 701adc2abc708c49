import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';

export type { NatsConnection, Subscription } from '@nats-io/nats-core';

export async function connectNats(url: string, name: string): Promise<NatsConnection> {
  return connect({
    servers: url.split(',').map((s) => s.trim()),
    name,
    // Keep trying forever: a NATS restart must delay work, not kill the service.
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    // Otherwise every request and timer builds an Error only to keep its call site: 1–2 % of
    // the gateway's and chats' CPU in the messaging bench's profiles.
    noAsyncTraces: true,
  });
}

// The health check of a NATS connection lives with the bus; kit's callers use it from here.
export { pingNats } from '@switchboard/proto/bus';
