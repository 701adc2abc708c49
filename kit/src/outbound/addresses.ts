import { BlockList, isIP } from 'node:net';

/**
 * Addresses a webhook may not reach unless private targets are allowed: loopback, private,
 * link-local, carrier-grade NAT, multicast, documentation and reserved ranges. Cloud metadata
 * endpoints (169.254.169.254, fd00:ec2::254) fall inside these.
 */
const blockedV4 = new BlockList();
// Separate lists: BlockList matches an IPv4 address against IPv6 rules as ::ffff:a.b.c.d,
// which ::/8 below contains, so one shared list would block every IPv4 address.
const blockedV6 = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  blockedV4.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  // IETF-reserved: the unspecified and loopback addresses, the NAT64 local-use prefix
  // 64:ff9b:1::/48 (RFC 8215) and anything else there that embeddedIpv4 does not recognise.
  ['::', 8],
  ['100::', 64],
  ['2001::', 23],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  blockedV6.addSubnet(net, prefix, 'ipv6');
}

type Groups = readonly [number, number, number, number, number, number, number, number];

/** The eight 16-bit groups of an IPv6 literal `isIP` accepted (any spelling, dotted tail included). */
function ipv6Groups(ip: string): Groups | undefined {
  let text = ip.toLowerCase();
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const parse = (part: string | undefined) =>
    part ? part.split(':').map((g) => Number.parseInt(g, 16)) : [];
  const head = parse(halves[0]);
  const tail = parse(halves[1]);
  const groups =
    halves.length === 2
      ? [...head, ...new Array<number>(Math.max(0, 8 - head.length - tail.length)).fill(0), ...tail]
      : head;
  if (groups.length !== 8 || groups.some((g) => !Number.isInteger(g) || g < 0 || g > 0xffff))
    return undefined;
  return groups as unknown as Groups;
}

function ipv4Of(hi: number, lo: number): string {
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

const zero = (groups: readonly number[], from: number, to: number) =>
  groups.slice(from, to).every((g) => g === 0);

/**
 * The IPv4 addresses an IPv6 address carries, when it is one of the forms that make a host
 * reach that IPv4 address: the stack, a translator or a tunnel relay connects to it. Each must
 * pass the IPv4 blocklist, or `[::ffff:0:7f00:1]` would be 127.0.0.1 by another name.
 */
function embeddedIn(g: Groups): string[] | undefined {
  const [g0, g1, g2, g3, g4, g5, g6, g7] = g;
  const last32 = ipv4Of(g6, g7);
  // IPv4-mapped ::ffff:a.b.c.d (RFC 4291 2.5.5.2).
  if (zero(g, 0, 5) && g5 === 0xffff) return [last32];
  // IPv4-compatible ::a.b.c.d (RFC 4291 2.5.5.1, deprecated); :: and ::1 come out as 0.0.0.x.
  if (zero(g, 0, 6)) return [last32];
  // IPv4-translated ::ffff:0:a.b.c.d (RFC 2765).
  if (zero(g, 0, 4) && g4 === 0xffff && g5 === 0) return [last32];
  // NAT64 well-known prefix 64:ff9b::/96 (RFC 6052).
  if (g0 === 0x64 && g1 === 0xff9b && zero(g, 2, 6)) return [last32];
  // 6to4 2002:AABB:CCDD::/48 (RFC 3056): the relay forwards to the IPv4 address in bits 16-48.
  if (g0 === 0x2002) return [ipv4Of(g1, g2)];
  // Teredo 2001:0:SSSS:SSSS:flags:port:CCCC:CCCC (RFC 4380): the server, and the client with
  // its bits inverted.
  if (g0 === 0x2001 && g1 === 0) return [ipv4Of(g2, g3), ipv4Of(g6 ^ 0xffff, g7 ^ 0xffff)];
  return undefined;
}

/** The IPv4 addresses an IPv6 literal embeds (see above), undefined for other addresses. */
export function embeddedIpv4(address: string): string[] | undefined {
  const groups = ipv6Groups(address.replace(/^\[|\]$/g, '').replace(/%.*$/, ''));
  return groups && embeddedIn(groups);
}

/**
 * True when `address` (an IP literal, brackets and a zone allowed) is one a webhook may not
 * reach. Non-IPs are not judged here.
 */
export function isBlockedAddress(address: string): boolean {
  const ip = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = isIP(ip);
  if (family === 4) return blockedV4.check(ip, 'ipv4');
  if (family === 6) {
    const groups = ipv6Groups(ip);
    // A spelling this parser does not follow is refused rather than guessed at.
    if (!groups) return true;
    const v4 = embeddedIn(groups);
    if (v4 !== undefined) return v4.some((a) => blockedV4.check(a, 'ipv4'));
    // The NAT64 local-use prefix 64:ff9b:1::/48 is refused whole: it is not global, and where
    // it carries the IPv4 address depends on the operator's prefix length.
    return blockedV6.check(ip, 'ipv6');
  }
  return false;
}

/** Host names that always mean this machine, refused before any lookup. */
export function isLocalHostname(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/\.$/, '');
  return h === 'localhost' || h.endsWith('.localhost');
}
