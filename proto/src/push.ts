import { defineConsumer } from './contracts.ts';
import { networkEvent } from './events.ts';

/**
 * The gateway's push notifier: reads every network event and notifies the devices of the users
 * who may read the chat of each new customer message. A failed push is not retried through the
 * stream (a late notification is worse than none); a handler that throws is, a few times.
 */
export const pushNotifierConsumer = defineConsumer({
  durable: 'gateway-push',
  message: networkEvent,
  ackWaitSeconds: 30,
  maxAckPending: 256,
  concurrency: 8,
  maxDeliver: 5,
});
