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
 * form, and the resolver's reload window (gateway). The risk rules count wider: riskClientOf.
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
 * shopper. An IPv6 address that carries an IPv4 one counts as that IPv4 address's /24: IPv4-mapped
 * (`::ffff:192.0.2.1`), NAT64 (`64:ff9b::192.0.2.1`, RFC 6052) and 6to4 (`2002:c000:201::/48`,
 * RFC 3056, whose every IPv4 address holds a /48: a /24 would be 256 of them). The per-address
 * limits keep counting each address (addressKeyOf): neighbours in one /24 are not one budget.
 * Anything that is not an address is its own network.
 */
export function riskClientOf(address: string): string {
  if (!address.includes(':')) {
    const octets = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(address)?.slice(1).map(Number);
    if (!octets?.every((octet) => octet <= 255)) return address;
    const [a = 0, b = 0, c = 0] = octets;
    return ipv4Network(a, b, c);
  }
  const groups = groupsOf(address);
  if (!groups) return address;
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = groups;
  const mapped = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0xffff;
  const nat64 = g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0;
  if (mapped || nat64) return ipv4Network(g6 >> 8, g6 & 0xff, g7 >> 8);
  if (g0 === 0x2002) return ipv4Network(g1 >> 8, g1 & 0xff, g2 >> 8);
  return `${g0.toString(16)}:${g1.toString(16)}:${g2.toString(16)}::/48`;
}

const ipv4Network = (a: number, b: number, c: number) => `${a}.${b}.${c}.0/24`;
