import { lookup as dnsLookup } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { buildConnector } from 'undici';
import { isBlockedAddress, isLocalHostname } from './addresses.ts';

/** The error code a refused connection carries, so callers can classify the failure. */
export const BLOCKED_ADDRESS_CODE = 'ERR_WEBHOOK_BLOCKED_ADDRESS';

export class BlockedAddressError extends Error {
  override readonly name = 'BlockedAddressError';
  readonly code = BLOCKED_ADDRESS_CODE;

  constructor(host: string, address?: string) {
    super(
      `refused to connect to ${host}${address && address !== host ? ` (${address})` : ''}: ` +
        'private, loopback and link-local addresses are not allowed as targets of outbound requests',
    );
  }
}

/**
 * Resolves like dns.lookup, then refuses when any resolved address is blocked. The socket
 * connects to exactly the addresses checked here, so a name that resolves differently on a
 * second lookup (DNS rebinding) cannot slip through between a check and the connect.
 */
export const guardedLookup: LookupFunction = (hostname, options, callback) => {
  if (isLocalHostname(hostname)) {
    callback(new BlockedAddressError(hostname), '', undefined);
    return;
  }
  dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) {
      callback(err, '', undefined);
      return;
    }
    const bad = addresses.find((a) => isBlockedAddress(a.address));
    if (bad) {
      callback(new BlockedAddressError(hostname, bad.address), '', undefined);
      return;
    }
    const first = addresses[0];
    if (options.all) callback(null, addresses);
    else if (first) callback(null, first.address, first.family);
    else
      callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '', undefined);
  });
};

/**
 * The undici connector for user-given URLs (webhooks, contact providers, configurator webhooks). IP literals never reach a lookup function (Node
 * connects to them directly), so they are checked here before connecting.
 */
export function webhookConnector(opts: {
  allowPrivateTargets: boolean;
  connectTimeoutMs: number;
}): buildConnector.connector {
  if (opts.allowPrivateTargets) return buildConnector({ timeout: opts.connectTimeoutMs });
  const connect = buildConnector({ timeout: opts.connectTimeoutMs, lookup: guardedLookup });
  return (options, callback) => {
    const host = options.hostname.replace(/^\[|\]$/g, '');
    if ((isIP(host) !== 0 && isBlockedAddress(host)) || isLocalHostname(host)) {
      callback(new BlockedAddressError(host), null);
      return;
    }
    connect(options, callback);
  };
}

/** Early feedback when a user-given URL is saved: the connect-time guard above is the real protection. */
export function obviouslyPrivateUrl(url: string): boolean {
  const parsed = URL.parse(url);
  if (!parsed) return false;
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  return isLocalHostname(host) || (isIP(host) !== 0 && isBlockedAddress(host));
}
