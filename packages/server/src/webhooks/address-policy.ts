import { BlockList, isIP } from 'node:net';

/** Kinds of address a webhook target may resolve to besides public ones. */
export type AddressKind = 'loopback' | 'private' | 'link-local' | 'unspecified' | 'multicast' | 'reserved';

/** Kinds an operator may allow (`webhooks.allow`); the others are never dialed. */
export const ALLOWABLE_KINDS = ['loopback', 'private', 'link-local'] as const;
export type AllowableKind = (typeof ALLOWABLE_KINDS)[number];

const RANGES: [AddressKind, string, number, 'ipv4' | 'ipv6'][] = [
  ['unspecified', '0.0.0.0', 8, 'ipv4'],
  ['private', '10.0.0.0', 8, 'ipv4'],
  ['private', '100.64.0.0', 10, 'ipv4'], // carrier-grade NAT
  ['loopback', '127.0.0.0', 8, 'ipv4'],
  ['link-local', '169.254.0.0', 16, 'ipv4'], // cloud metadata services live here
  ['private', '172.16.0.0', 12, 'ipv4'],
  ['reserved', '192.0.0.0', 24, 'ipv4'],
  ['reserved', '192.0.2.0', 24, 'ipv4'],
  ['private', '192.168.0.0', 16, 'ipv4'],
  ['reserved', '198.18.0.0', 15, 'ipv4'],
  ['reserved', '198.51.100.0', 24, 'ipv4'],
  ['reserved', '203.0.113.0', 24, 'ipv4'],
  ['multicast', '224.0.0.0', 4, 'ipv4'],
  ['reserved', '240.0.0.0', 4, 'ipv4'], // includes 255.255.255.255
  ['unspecified', '::', 128, 'ipv6'],
  ['loopback', '::1', 128, 'ipv6'],
  ['reserved', '64:ff9b:1::', 48, 'ipv6'], // local-use NAT64
  ['reserved', '100::', 64, 'ipv6'], // discard-only
  ['reserved', '2001:db8::', 32, 'ipv6'], // documentation
  ['private', 'fc00::', 7, 'ipv6'], // unique local
  ['link-local', 'fe80::', 10, 'ipv6'],
  ['private', 'fec0::', 10, 'ipv6'], // deprecated site-local
  ['multicast', 'ff00::', 8, 'ipv6'],
];

const lists = new Map<AddressKind, BlockList>();
for (const [kind, net, prefix, family] of RANGES) {
  let l = lists.get(kind);
  if (!l) lists.set(kind, (l = new BlockList()));
  l.addSubnet(net, prefix, family);
}

/** The IPv4 address inside an IPv4-mapped or IPv4-compatible IPv6 address (`::ffff:7f00:1` -> `127.0.0.1`). */
function embeddedV4(v6: string): string | undefined {
  const host = new URL(`http://[${v6}]/`).hostname.slice(1, -1); // canonical, lower case, compressed
  const m = /^::(?:ffff:)?([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(host) ?? /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(host);
  if (!m) return undefined;
  if (m[2] === undefined) return m[1];
  const hi = parseInt(m[1]!, 16);
  const lo = parseInt(m[2], 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/**
 * What kind of non-public address `ip` is, or `'public'`. IPv4-mapped IPv6 (`::ffff:127.0.0.1`) is judged as
 * the IPv4 address it carries. Anything that is not an IP address at all is `'reserved'`.
 */
export function classifyAddress(ip: string): AddressKind | 'public' {
  let addr = ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip;
  const zone = addr.indexOf('%');
  if (zone >= 0) addr = addr.slice(0, zone);
  let family = isIP(addr);
  if (family === 0) return 'reserved';
  if (family === 6) {
    const v4 = embeddedV4(addr);
    if (v4 !== undefined) {
      addr = v4;
      family = 4;
    }
  }
  const type = family === 4 ? 'ipv4' : 'ipv6';
  for (const [kind, list] of lists) if (list.check(addr, type)) return kind;
  return 'public';
}

/** Undefined when `ip` may be dialed, else why not (for the delivery log). */
export function refusal(ip: string, allow: readonly AllowableKind[]): string | undefined {
  const kind = classifyAddress(ip);
  if (kind === 'public' || (allow as readonly string[]).includes(kind)) return undefined;
  const hint = (ALLOWABLE_KINDS as readonly string[]).includes(kind)
    ? ` (allow it with webhooks.allow: ['${kind}'])`
    : '';
  return `refused: ${ip} is a non-public address (${kind})${hint}`;
}
