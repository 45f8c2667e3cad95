import { parseDlUri } from './dl-syntax.ts';
import { checkGtin14 } from './gtin.ts';

/** The parts of a GS1 Digital Link URI that Hallmark reads and writes. */
export interface DigitalLink {
  /** Scheme and host, e.g. `https://id.brand.com`; not part of what is signed. */
  origin: string;
  gtin: string;
  serial?: string;
  batch?: string;
  /** AI 22, consumer product variant. */
  variant?: string;
  /** AI 17 as YYMMDD. */
  expiry?: string;
  /** base64url, from `sig` or GS1's AI 8030. */
  signature?: string;
}

export type LinkProblem = { code: 'INVALID_URL' | 'MISSING_SIGNATURE'; message: string; details?: Record<string, unknown> };
export type ParseResult = { ok: true; link: DigitalLink } | { ok: false; problem: LinkProblem };

const invalid = (message: string, details?: Record<string, unknown>): ParseResult => ({
  ok: false,
  problem: { code: 'INVALID_URL', message, ...(details ? { details } : {}) },
});

const qualifiers = { '22': 'variant', '10': 'batch', '21': 'serial' } as const;
type Qualifier = keyof typeof qualifiers;

/** YYMMDD, a real date; DD 00 means the last day of the month (GS1 General Specifications 3.4.7). */
export function isValidYymmdd(text: string): boolean {
  if (!/^\d{6}$/.test(text)) return false;
  const month = Number(text.slice(2, 4));
  const day = Number(text.slice(4, 6));
  if (month < 1 || month > 12) return false;
  if (day === 0) return true;
  const year = 2000 + Number(text.slice(0, 2));
  return day <= new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/**
 * Reads a GS1 Digital Link URI or the text of a QR code holding one (surrounding white space is
 * ignored). The URI must pass GS1's syntax as the GS1 Barcode Syntax Engine checks it
 * (`parseDlUri`: keys and qualifiers in the path in GS1's order, data attributes in the query, no AI
 * twice, numeric query keys only if they are AIs, every value's length, characters and check digit),
 * with one difference kept on purpose (docs/SIGNING.md): `/21/` may come before `/10/`, the order
 * of the interface spec that printed codes carry. Hallmark then reads GTIN links only: the key is
 * `/01/`, the qualifiers 22, 10 and 21, the expiry AI 17, and the signature `sig` or AI `8030`.
 * Every refusal says what was wrong. With `signature: 'optional'` a link without one is read too.
 */
export function parseDigitalLink(input: string, options: { signature?: 'required' | 'optional' } = {}): ParseResult {
  const text = input.trim();
  if (text.length === 0) return invalid('The link is empty.');
  if (text.length > 2048) return invalid('The link is longer than 2048 characters.');
  const syntax = parseDlUri(text, { permitSerialBeforeBatch: true });
  if (!syntax.ok) {
    const { message, ai, value } = syntax.error;
    if (ai === '01' && value !== undefined) {
      const check = checkGtin14(value);
      if (!check.ok && check.reason === 'check-digit') {
        return invalid(`The GTIN is not valid: ${check.message}.`, { ai, provided: value, expected: check.expected });
      }
    }
    return invalid(message, { ...(ai !== undefined ? { ai } : {}), ...(value !== undefined ? { provided: value } : {}) });
  }
  const { ais, otherParams } = syntax.dl;
  const [key, ...rest] = ais;
  if (key?.ai !== '01') {
    return invalid(`This is a GS1 Digital Link for AI ${key?.ai}, not a GTIN: Hallmark's codes start /01/<GTIN>.`, {
      ai: key?.ai,
    });
  }
  const link: DigitalLink = { origin: originOf(text), gtin: key.value };
  for (const { ai, value, pathIndex } of rest) {
    if (pathIndex === undefined) continue;
    if (!(ai in qualifiers))
      return invalid(`/${ai}/ is valid GS1 but not a qualifier of /01/ that Hallmark reads (22, 10 or 21).`, { ai });
    link[qualifiers[ai as Qualifier]] = value;
  }
  const expiry = ais.find((a) => a.ai === '17');
  if (expiry) link.expiry = expiry.value;

  const signatures = [
    ...otherParams.filter((p) => p.key === 'sig').map((p) => p.value ?? ''),
    ...ais.filter((a) => a.ai === '8030').map((a) => a.value),
  ];
  if (signatures.length === 0) {
    // An item's identity (the resolver's linkset, link types, redirects) needs no signature.
    if (options.signature === 'optional') return { ok: true, link };
    return {
      ok: false,
      problem: { code: 'MISSING_SIGNATURE', message: 'The link has no signature (query parameter sig or 8030).' },
    };
  }
  if (signatures.length > 1) return invalid('The link carries more than one signature (sig and 8030 together, or sig twice).');
  const signature = signatures[0] as string;
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(signature)) return invalid('The signature is not base64url (A–Z a–z 0–9 - _, no padding).');
  link.signature = signature;
  return { ok: true, link };
}

/** Scheme and host as a browser would write them, or as given when no URL parser reads the host. */
function originOf(text: string): string {
  try {
    return new URL(text).origin;
  } catch {
    const match = /^([A-Za-z]+):\/\/([^/?#]*)/.exec(text);
    return `${match?.[1]?.toLowerCase() ?? 'https'}://${match?.[2]?.toLowerCase() ?? ''}`;
  }
}

const encode = (value: string) =>
  encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/**
 * Writes a link. `spec` order puts /21/ before /10/ as the interface spec shows it (docs/INTERFACE.md); `gs1` order puts
 * /10/ before /21/ as GS1's own parsers require. The signature goes in `sig`, the expiry in `17`.
 */
export function formatDigitalLink(link: DigitalLink, order: 'spec' | 'gs1' = 'spec'): string {
  const path = [`/01/${link.gtin}`];
  if (link.variant !== undefined) path.push(`/22/${encode(link.variant)}`);
  const serial = link.serial === undefined ? '' : `/21/${encode(link.serial)}`;
  const batch = link.batch === undefined ? '' : `/10/${encode(link.batch)}`;
  path.push(order === 'spec' ? serial + batch : batch + serial);
  const query = [
    link.expiry === undefined ? '' : `17=${link.expiry}`,
    link.signature === undefined ? '' : `sig=${link.signature}`,
  ]
    .filter(Boolean)
    .join('&');
  return `${link.origin.replace(/\/$/, '')}${path.join('')}${query ? `?${query}` : ''}`;
}
