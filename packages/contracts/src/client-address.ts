/** An IPv6 address's eight 16-bit groups (a zone id dropped, a trailing dotted IPv4 part read as two groups). */
function groupsOf(address: string): number[] | undefined {
  let text = address.split('%')[0] ?? '';
  // A dotted IPv4 part ends the address and follows a colon (`::ffff:192.0.2.1`, `64:ff9b::192.0.2.1`).
  const dotted = /:(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    if ([a, b, c, d].some((octet) => octet > 255)) return undefined;
    text = `${text.slice(0, dotted.index + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail, ...more] = text.split('::');
  if (more.length > 0) return undefined;
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === undefined || tail === '' ? [] : tail.split(':');
  const missing = 8 - headGroups.length - tailGroups.length;
  // Without `::`, eight groups; with it, at least one group left out.
  if (tail === undefined ? missing !== 0 : missing < 1) return undefined;
  const texts = [...headGroups, ...Array<string>(missing).fill('0'), ...tailGroups];
  if (!texts.every((group) => /^[0-9a-fA-F]{1,4}$/.test(group))) return undefined;
  return texts.map((group) => Number.parseInt(group, 16));
}

/**
 * The key a client address counts under, wherever Hallmark counts clients by address: the
 * per-address limits of the keyless routes, of failed authentications and of the resolver's report
 * form (gateway), and the clients of the risk rules (verify-service: a client is the API key and
 * this key, so the distinct clients of the cloned-label rule and the repeats of EXCESSIVE_SCANS).
 * An IPv4 address is its own key. An IPv6 address counts as its /64, the block one subscriber is
 * given whole (RFC 6177; a home line, a cloud instance), so its holder cannot rotate through 2^64
 * addresses for fresh budgets or for as many "distinct clients"; an IPv4 address written as IPv6
 * (`::ffff:192.0.2.1`) is that IPv4 address. Anything else (not an address) is its own key.
 */
export function addressKeyOf(address: string): string {
  const groups = address.includes(':') ? groupsOf(address) : undefined;
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

/**
 * The network a client counts as to the risk rules (verify-service: the distinct clients of the
 * cloned-label rule, the repeats of EXCESSIVE_SCANS): an IPv4 address's /24 and an IPv6 address's
 * /48, wherever they came through. A network that cheap to hold (a /24 rented by the month, a
 * tunnel broker's free /48) gave whoever held it as many "distinct clients" as it has addresses or
 * /64s, and ten made a brand's genuine code SUSPICIOUS, KNOWN_COUNTERFEIT_PATTERN, for every
 * shopper. The per-address limits keep counting each address (addressKeyOf): neighbours in one
 * /24 are not one budget. Anything that is not an address is its own network.
 */
export function riskClientOf(address: string): string {
  const key = addressKeyOf(address);
  const ipv4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(key);
  if (ipv4) return ipv4.slice(1).every((octet) => Number(octet) <= 255) ? `${ipv4[1]}.${ipv4[2]}.${ipv4[3]}.0/24` : key;
  if (!key.endsWith('::/64')) return key;
  const [g0, g1, g2] = key.slice(0, -'::/64'.length).split(':');
  return `${g0}:${g1}:${g2}::/48`;
}
