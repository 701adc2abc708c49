import { defineConsumer } from './contracts.ts';
import { networkMessageEvent } from './events.ts';

/**
 * The gateway's push notifier: reads the network events with customer messages (statuses travel
 * on another subject and never reach it) and notifies the devices of the users
 * who may read the chat of each new customer message. A failed push is not retried through the
 * stream (a late notification is worse than none); a handler that throws is, a few times.
 */
export const pushNotifierConsumer = defineConsumer({
  durable: 'gateway-push',
  message: networkMessageEvent,
  ackWaitSeconds: 30,
  maxAckPending: 256,
  concurrency: 8,
  maxDeliver: 5,
});
