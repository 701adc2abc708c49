import { randomBytes, randomInt } from 'node:crypto';

/** A message id in the network's style: `wamid.` and an opaque base64 token. */
export function newWamid(waId: string): string {
  const token = Buffer.concat([Buffer.from(`HBg${waId.length}${waId}`), randomBytes(16)]);
  return `wamid.${token.toString('base64')}`;
}

/** Media, phone-number and account ids are numeric strings on the network. */
export function numericId(length = 16): string {
  let id = String(randomInt(1, 10));
  while (id.length < length) id += String(randomInt(0, 10));
  return id;
}

/** Graph-API trace ids: opaque, 23 characters. */
export function traceId(): string {
  return randomBytes(17).toString('base64url').slice(0, 23);
}
