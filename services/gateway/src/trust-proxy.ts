import { isIP } from 'node:net';
import { Type } from '@sinclair/typebox';

const ipv4 =
  '(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])(\\.(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])){3}(/([0-9]|[12][0-9]|3[0-2]))?';
const ipv6 = '[0-9A-Fa-f]{0,4}(:[0-9A-Fa-f]{0,4}){2,7}(/([0-9]|[1-9][0-9]|1[01][0-9]|12[0-8]))?';
const trusted = `(${ipv4}|${ipv6}|loopback|linklocal|uniquelocal)`;

/**
 * HALLMARK_TRUST_PROXY: which peers may say who the client is in X-Forwarded-For. `off` (nobody:
 * the socket's address is the client), a number of proxy hops in front of the gateway, or a comma
 * list of proxy addresses and CIDR ranges. Never "everyone": then any client could pick its own
 * address, and with it a fresh rate-limit bucket per request.
 */
export const TrustProxySetting = Type.String({
  pattern: `^(off|[1-9]|${trusted}( *, *${trusted})*)$`,
  default: 'off',
  description:
    'off, a number of proxy hops (1-9), or a comma list of proxy addresses/CIDRs (e.g. 10.0.0.0/8, or loopback) trusted to set X-Forwarded-For',
});

/**
 * The setting as fastify's `trustProxy` option. A hop count becomes a function: fastify 5 reads a
 * bare number as "trust nobody" (it cannot check the peer), so `n` trusts the nearest n addresses
 * (the socket's peer and the n-1 last forwarded ones), whoever the peer is. Use a count only
 * where the gateway can be reached through its proxies alone (a ClusterIP Service behind an
 * ingress); elsewhere list the proxies' addresses.
 */
export function trustProxyOf(setting: string): false | ((address: string, hop: number) => boolean) | string[] {
  if (setting === 'off') return false;
  if (/^[1-9]$/.test(setting)) {
    const hops = Number(setting);
    return (_address, hop) => hop < hops;
  }
  return setting.split(',').map((entry) => entry.trim());
}

/**
 * The client's address as the limits, the risk rules and the logs should see it, from what fastify
 * took out of a trusted proxy's X-Forwarded-For: an address with a port (`192.0.2.1:5555`,
 * `[2001:db8::1]:80`, as some load balancers write it) is that address; anything that is not an
 * address (`unknown`, a typo of the proxy's) is the proxy's own, the socket's peer. Taken as is,
 * each port or odd value was a client of its own: a fresh rate-limit bucket, and another distinct
 * client to the cloned-label rule.
 */
export function clientAddressOf(forwarded: string, peer: string | undefined): string {
  if (isIP(forwarded)) return forwarded;
  const bracketed = /^\[([^\]]+)\](?::\d{1,5})?$/.exec(forwarded)?.[1];
  if (bracketed && isIP(bracketed) === 6) return bracketed;
  const withPort = /^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/.exec(forwarded)?.[1];
  if (withPort && isIP(withPort) === 4) return withPort;
  return peer ?? forwarded;
}
