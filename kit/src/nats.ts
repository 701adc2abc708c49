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
  });
}

/** True when the server answers a round trip within the timeout. */
export async function pingNats(nc: NatsConnection, timeoutMs = 2_000): Promise<boolean> {
  if (nc.isClosed() || nc.isDraining()) return false;
  let timer: NodeJS.Timeout | undefined;
  try {
    const timeout = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    return await Promise.race([nc.flush().then(() => true), timeout]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}
