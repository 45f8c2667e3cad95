import { BlockList, isIP } from 'node:net';
import { createSystemLookup, type Lookup } from './dns-lookup.ts';

export type { Lookup } from './dns-lookup.ts';

/** Where a delivery may go: a URL and the address checked for it, which the connection must use. */
export interface DeliveryTarget {
  url: URL;
  address: string;
  family: 4 | 6;
}

/** The process's DNS for deliveries (dns-lookup.ts): c-ares, holding no thread of libuv's pool. */
export const systemLookup: Lookup = createSystemLookup();

/**
 * Addresses a webhook must not reach unless the operator allows private ones: unspecified, loopback,
 * private (RFC 1918, CGNAT), link-local (cloud metadata at 169.254.169.254), unique-local, multicast,
 * reserved and documentation ranges, the 6to4 relay anycast, SRv6 segment identifiers, and IPv4
 * mapped into IPv6.
 */
// Two lists: Node's BlockList matches IPv4 addresses against IPv4-mapped IPv6 rules, so one list
// holding ::ffff:0:0/96 would refuse every IPv4 address.
const refusedV4 = new BlockList();
const refusedV6 = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  // The 6to4 relay anycast (RFC 7526 deprecated it): whatever answers there is no one's endpoint.
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  refusedV4.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  // Unspecified, loopback and the IPv4-compatible addresses (::a.b.c.d, deprecated) at once.
  ['::', 96],
  ['::ffff:0:0', 96],
  // IPv4 embedded by translation (SIIT), NAT64 (well-known and local-use), 6to4 and Teredo: each
  // can reach an IPv4 address behind it, private ones included, where the network routes them.
  ['::ffff:0:0:0', 96],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['2002::', 16],
  ['2001::', 32],
  ['100::', 64],
  // Documentation (RFC 3849, and RFC 9637's 3fff::/20), and SRv6 segment identifiers (RFC 9602):
  // the one never routed to a host, the other a domain's own forwarding instructions.
  ['2001:db8::', 32],
  ['3fff::', 20],
  // Benchmarking (RFC 5180, as 198.18.0.0/15 for IPv4) and ORCHID (RFC 4843, and v2, RFC 7343):
  // no host of anyone's is addressed there. (All three are inside 2001::/23, which is otherwise
  // allocated to real networks, so each is named.)
  ['2001:2::', 48],
  ['2001:10::', 28],
  ['2001:20::', 28],
  ['5f00::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  refusedV6.addSubnet(network, prefix, 'ipv6');
}

/** True when the address is one a webhook may not reach (see the lists above; any other IPv4-mapped form too). */
export function isRefusedAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return refusedV4.check(address, 'ipv4');
  if (family === 6) {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    if (mapped?.[1]) return refusedV4.check(mapped[1], 'ipv4');
    return refusedV6.check(address, 'ipv6');
  }
  return true;
}

/**
 * A delivery refused before any connection. `message` is what the endpoint's owner sees in the
 * attempt log; `detail` (the address refused, the DNS error) goes to the operator's log only, so a
 * tenant cannot map internal names and addresses through its webhook's attempts.
 */
export class RefusedTarget extends Error {
  constructor(
    message: string,
    readonly detail: string = message,
  ) {
    super(message);
  }
}

/** One answer for a name that does not resolve and one that resolves where webhooks may not go. */
const unreachableHost =
  'the host does not resolve, or resolves to an address webhooks may not reach (private, loopback, link-local or reserved)';

/** Only http(s) URLs without credentials; `RefusedTarget` otherwise. */
export function parseWebhookUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new RefusedTarget('not a URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new RefusedTarget('only http and https URLs');
  if (url.username || url.password) throw new RefusedTarget('no credentials in the URL');
  // As written, not only as parsed: the URL parser reads `http:///x`, `http:x` or `http:\\x` as
  // http://x/, so the endpoint shown to its owner would not be where deliveries go.
  if (!/^https?:\/\/[^/\\?#@\s]/i.test(text)) throw new RefusedTarget('the host must follow http:// or https://');
  return url;
}

/** A lookup that had not answered when its time was up. */
class LookupTimedOut extends Error {}

/**
 * The lookup's answer, or LookupTimedOut after `timeoutMs`. The lookup is told to stop then (its
 * signal aborts: a c-ares query is cancelled; a system resolver's cannot be, dns-lookup.ts), and
 * the delivery no longer waits for it.
 */
async function lookupWithin(lookup: Lookup, host: string, timeoutMs: number | undefined) {
  if (timeoutMs === undefined) return lookup(host);
  const stop = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () => {
        reject(new LookupTimedOut());
        stop.abort();
      },
      Math.max(0, timeoutMs),
    );
  });
  try {
    return await Promise.race([lookup(host, stop.signal), late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Resolves the URL's host now, at delivery, and checks every address it resolves to; the delivery
 * then connects to the address checked here (never resolving again, so a DNS answer that changes
 * between the check and the connection cannot send it elsewhere). A lookup that takes longer than
 * `timeoutMs` is refused as a name that does not resolve (a nameserver that never answers would
 * otherwise hold the delivery for the resolver's whole retry time). Rejects with RefusedTarget.
 */
export async function resolveTarget(
  text: string,
  options: { allowPrivate: boolean; lookup: Lookup; timeoutMs?: number },
): Promise<DeliveryTarget> {
  const url = parseWebhookUrl(text);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const literal = isIP(host);
  const addresses = literal
    ? [{ address: host, family: literal }]
    : await lookupWithin(options.lookup, host, options.timeoutMs).catch((error: unknown) => {
        if (error instanceof LookupTimedOut) {
          throw new RefusedTarget(unreachableHost, `DNS lookup timed out after ${options.timeoutMs} ms`);
        }
        throw new RefusedTarget(unreachableHost, `DNS lookup failed: ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
      });
  if (addresses.length === 0) throw new RefusedTarget(unreachableHost, 'the host has no address');
  if (!options.allowPrivate) {
    const bad = addresses.find((entry) => isRefusedAddress(entry.address));
    if (bad) throw new RefusedTarget(unreachableHost, `refused address ${bad.address}`);
  }
  const first = addresses[0] as { address: string; family: number };
  return { url, address: first.address, family: first.family === 6 ? 6 : 4 };
}
