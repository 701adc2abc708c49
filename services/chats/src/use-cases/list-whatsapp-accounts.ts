import type { listWhatsappAccounts as contract } from '@switchboard/proto';
import type { RequestOf } from './types.ts';

export interface WhatsappAccount {
  phone_number: string;
  provider_base_url: string;
  webhook_url: string | null;
}

/** The instance's one business number. */
export async function listWhatsappAccounts(
  deps: { account: WhatsappAccount },
  r: RequestOf<typeof contract>,
) {
  return { count: 1, results: [deps.account].slice(r.offset, r.offset + r.limit) };
}
