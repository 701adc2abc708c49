import { createHash } from 'node:crypto';
import type { OutboundMessageInput, SendMessageRequest } from '@switchboard/proto';

/** The body the network receives: the inbox request with `to` for `wa_id`. */
export function networkRequestOf(req: SendMessageRequest): OutboundMessageInput {
  const { wa_id, ...rest } = req;
  return {
    ...rest,
    messaging_product: 'whatsapp',
    recipient_type: 'individual',
    to: wa_id,
  } as OutboundMessageInput;
}

/** A canonical form of a JSON value: object keys sorted, so key order never changes the hash. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** SHA-256 of a send request, stored with its Idempotency-Key to tell a retry from a reuse. */
export function requestHash(req: SendMessageRequest): string {
  return createHash('sha256').update(canonicalJson(req)).digest('hex');
}
