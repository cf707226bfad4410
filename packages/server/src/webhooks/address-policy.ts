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

/** The eight 16-bit groups of an IPv6 address (a trailing dotted IPv4 part included), or undefined. */
function groups(v6: string): number[] | undefined {
  const host = new URL(`http://[${v6}]/`).hostname.slice(1, -1); // canonical: lower case, hex groups only
  const [head = '', tail] = host.split('::');
  const parse = (s: string) => (s === '' ? [] : s.split(':').map((g) => parseInt(g, 16)));
  const a = parse(head);
  const b = tail === undefined ? [] : parse(tail);
  const out = tail === undefined ? a : [...a, ...new Array<number>(8 - a.length - b.length).fill(0), ...b];
  return out.length === 8 && out.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? out : undefined;
}

const v4Of = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;

/**
 * The IPv4 addresses an IPv6 address carries, each judged in its place: IPv4-mapped and IPv4-compatible
 * (`::ffff:7f00:1`, `::7f00:1`), NAT64 (`64:ff9b::/96`, the last 32 bits), 6to4 (`2002::/16`, bits 16-47) and
 * Teredo (`2001::/32`: the server in bits 32-63, the client in the last 32 bits inverted). Empty for others.
 */
function embeddedV4(v6: string): string[] {
  const g = groups(v6);
  if (!g) return [];
  const zero = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zero(0, 5) && (g[5] === 0xffff || (g[5] === 0 && (g[6] !== 0 || g[7]! > 1)))) return [v4Of(g[6]!, g[7]!)];
  if (g[0] === 0x64 && g[1] === 0xff9b && zero(2, 6)) return [v4Of(g[6]!, g[7]!)];
  if (g[0] === 0x2002) return [v4Of(g[1]!, g[2]!)];
  if (g[0] === 0x2001 && g[1] === 0) return [v4Of(g[2]!, g[3]!), v4Of(g[6]! ^ 0xffff, g[7]! ^ 0xffff)];
  return [];
}

/**
 * What kind of non-public address `ip` is, or `'public'`. An IPv6 address that carries an IPv4 one (mapped,
 * compatible, NAT64, 6to4, Teredo: `embeddedV4`) is judged by that IPv4 address too. Anything that is not an IP address at all is `'reserved'`.
 */
export function classifyAddress(ip: string): AddressKind | 'public' {
  let addr = ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip;
  const zone = addr.indexOf('%');
  if (zone >= 0) addr = addr.slice(0, zone);
  const family = isIP(addr);
  if (family === 0) return 'reserved';
  if (family === 6) {
    // A non-public IPv4 inside (a translator or tunnel would reach it) makes the whole address that kind.
    for (const v4 of embeddedV4(addr)) {
      const kind = kindIn(v4, 'ipv4');
      if (kind !== 'public') return kind;
    }
  }
  return kindIn(addr, family === 4 ? 'ipv4' : 'ipv6');
}

function kindIn(addr: string, type: 'ipv4' | 'ipv6'): AddressKind | 'public' {
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
