import type { Subscription } from '@switchboard/kit';
import { fanoutRpc } from '@switchboard/proto';
import type { Bus } from '@switchboard/proto/bus';
import type { WebhookManager } from './use-cases/webhooks.ts';

/**
 * Serves the webhook management requests. Every fanout process serves them in one queue group
 * per operation, so each request is answered once, by whichever process is free.
 */
export function serveWebhookRpc(bus: Bus, manager: WebhookManager): Subscription[] {
  return [
    bus.serve(fanoutRpc.create, (req) => manager.create(req)),
    bus.serve(fanoutRpc.list, (req) => manager.list(req)),
    bus.serve(fanoutRpc.get, (req) => manager.get(req)),
    bus.serve(fanoutRpc.update, (req) => manager.update(req)),
    bus.serve(fanoutRpc.delete, (req) => manager.delete(req)),
    bus.serve(fanoutRpc.rotateSecret, (req) => manager.rotateSecret(req)),
    bus.serve(fanoutRpc.test, (req) => manager.test(req)),
    bus.serve(fanoutRpc.deliveries, (req) => manager.deliveries(req)),
    bus.serve(fanoutRpc.replay, (req) => manager.replay(req)),
  ];
}
