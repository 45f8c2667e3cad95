import { isIPv6 } from 'node:net';

/** An IPv6 address's eight 16-bit groups (a zone id dropped, a trailing dotted IPv4 part read as two groups). */
function groupsOf(address: string): number[] | undefined {
  let text = address.split('%')[0] ?? '';
  const dotted = /(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail, ...more] = text.split('::');
  if (more.length > 0) return undefined;
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === undefined || tail === '' ? [] : tail.split(':');
  const missing = 8 - headGroups.length - tailGroups.length;
  if (tail === undefined ? missing !== 0 : missing < 0) return undefined;
  const groups = [...headGroups, ...Array<string>(missing).fill('0'), ...tailGroups].map((group) => Number.parseInt(group, 16));
  return groups.every((group) => Number.isInteger(group) && group >= 0 && group <= 0xffff) ? groups : undefined;
}

/**
 * The client address whose budgets a request spends: the per-address limits of the keyless routes,
 * of failed authentications and of the resolver's report form. An IPv4 address is its own. An IPv6
 * address counts as its /64, the block one subscriber is given whole (RFC 6177; a home line, a
 * cloud instance), so its holder cannot rotate through 2^64 addresses for fresh budgets; an IPv4
 * address written as IPv6 (`::ffff:192.0.2.1`) is that IPv4 address. Anything else (not an
 * address) is its own key, as before.
 */
export function budgetAddressOf(address: string): string {
  if (!isIPv6(address)) return address;
  const groups = groupsOf(address);
  if (!groups) return address;
  const [g0, g1, g2, g3, g4, g5, g6 = 0, g7 = 0] = groups;
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0xffff) {
    return `${g6 >> 8}.${g6 & 0xff}.${g7 >> 8}.${g7 & 0xff}`;
  }
  return `${groups
    .slice(0, 4)
    .map((group) => group.toString(16))
    .join(':')}::/64`;
}
