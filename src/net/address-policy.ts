// Pure classification of IP addresses for outbound fetching (SSRF guard). Decides only
// from the address itself; resolving and connecting live in url-check / guarded-fetch.
import net from 'node:net';
import ipaddr from 'ipaddr.js';

export type AddressClass =
  | 'public'
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'cgnat'
  | 'unspecified'
  | 'multicast'
  | 'broadcast'
  | 'reserved'
  | 'unique-local'
  | 'site-local'
  | 'benchmarking'
  | 'nat64'
  | 'ipv4-translated'
  | '6to4'
  | 'teredo'
  | 'invalid';

export interface UrlPolicy {
  /** Operator opt-in: every address class is allowed (e.g. a LAN-only deployment). */
  allowPrivate: boolean;
  /** Exact "host:port" or "host" (any port) entries that bypass the address check, e.g. an internal origin the operator trusts. */
  allowHosts: string[];
  maxRedirects: number;
  connectTimeoutMs: number;
  /** No bytes (headers or body) for this long -> timeout. */
  idleTimeoutMs: number;
  totalTimeoutMs: number;
  maxBytes: number;
  userAgent: string;
}

// ipaddr.js range names -> ours. Any range not listed here (as112, amt, orchid, discard,
// documentation, segment routing, ...) is 'reserved': anything that is not plain unicast is refused.
const RANGE_CLASS: Record<string, AddressClass> = {
  unicast: 'public',
  unspecified: 'unspecified',
  broadcast: 'broadcast',
  multicast: 'multicast',
  linkLocal: 'link-local',
  loopback: 'loopback',
  carrierGradeNat: 'cgnat',
  private: 'private',
  uniqueLocal: 'unique-local',
  deprecatedSiteLocal: 'site-local',
  benchmarking: 'benchmarking',
  rfc6052: 'nat64',
  rfc6145: 'ipv4-translated',
  '6to4': '6to4',
  teredo: 'teredo',
};

// Only 2000::/3 is allocated for global unicast; ipaddr.js calls e.g. the deprecated
// IPv4-compatible ::a.b.c.d form 'unicast', so IPv6 outside this block is not public.
const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parseCIDR('2000::/3');

export function classifyAddress(ip: string): AddressClass {
  // Gate on Node's own parser: the string we classify is the string the socket will use,
  // so ipaddr.js's lenient forms ("127.1", "0x7f.1") can never disagree with net.connect.
  const family = net.isIP(ip);
  if (family === 0) return 'invalid';
  let addr: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    // ipaddr.js reads the deprecated "::a.b.c.d" as IPv4-mapped, the kernel does not; so
    // first canonicalise IPv6 to pure hex (WHATWG URL parser) and drop any %zone.
    const text = family === 6 ? new URL(`http://[${ip.split('%')[0]}]`).hostname.slice(1, -1) : ip;
    addr = ipaddr.process(text); // unwraps ::ffff:7f00:1 (IPv4-mapped) to 127.0.0.1
  } catch {
    return 'invalid';
  }
  const cls = RANGE_CLASS[addr.range()] ?? 'reserved';
  if (cls === 'public' && addr.kind() === 'ipv6' && !addr.match(GLOBAL_UNICAST_V6)) return 'reserved';
  return cls;
}

export function isAllowedAddress(ip: string, policy: Pick<UrlPolicy, 'allowPrivate'>): boolean {
  const cls = classifyAddress(ip);
  if (cls === 'invalid') return false;
  return policy.allowPrivate || cls === 'public';
}

/** "a private address", "an IPv4-translated address": for refusal messages. */
export function describeClass(cls: AddressClass): string {
  const label = cls === 'cgnat' ? 'carrier-grade NAT' : cls === 'public' ? 'public' : cls;
  return `${/^[aeiou]/i.test(label) ? 'an' : 'a'} ${label} address`;
}
