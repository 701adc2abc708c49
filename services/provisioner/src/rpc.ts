import type { Subscription } from '@switchboard/kit';
import {
  authenticatePartner,
  createPartnerInstance,
  deletePartnerInstance,
  getPartnerInstance,
  listPartnerInstances,
  partnerExists,
} from '@switchboard/proto';
import { partnerExists as partnerExistsInStore } from './store/partners.ts';
import type { UseCaseDeps } from './use-cases/deps.ts';
import * as instances from './use-cases/instances.ts';
import * as partners from './use-cases/partners.ts';

/** The partner-scope requests, each mapped to its use case, in one queue group. */
export function startRpc(deps: UseCaseDeps): Subscription[] {
  const { bus } = deps;
  const queue = { queue: 'provisioner' };
  return [
    bus.serve(authenticatePartner, (r) => partners.authenticatePartner(deps, r.api_key), queue),
    bus.serve(
      partnerExists,
      async (r) => ({ exists: await partnerExistsInStore(deps.db, r.partner_id) }),
      queue,
    ),
    bus.serve(createPartnerInstance, (r) => instances.createInstance(deps, r.partner_id, r.body), queue),
    bus.serve(listPartnerInstances, (r) => instances.listInstances(deps, r), queue),
    bus.serve(getPartnerInstance, (r) => instances.getInstance(deps, r), queue),
    bus.serve(deletePartnerInstance, (r) => instances.deleteInstance(deps, r), queue),
  ];
}
