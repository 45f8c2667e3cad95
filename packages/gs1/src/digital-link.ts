import { checkAi82Value } from './ai82.ts';
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

function decodeSegment(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

/**
 * Reads a GS1 Digital Link URI or the text of a QR code holding one (surrounding white space is
 * ignored). Accepts any http(s) host, a path prefix before `/01/`, the qualifiers 22, 10 and 21 in
 * the spec's order (21 before 10) or GS1's (22, 10, 21), percent-encoding, AI 17 in the query, and
 * the signature in `sig` or AI `8030`. Every refusal says what was wrong.
 */
export function parseDigitalLink(input: string): ParseResult {
  const text = input.trim();
  if (text.length === 0) return invalid('The link is empty.');
  if (text.length > 2048) return invalid('The link is longer than 2048 characters.');
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return invalid('Not a URL: a GS1 Digital Link starts with https:// (or http://).');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    return invalid(`A GS1 Digital Link uses http or https, not ${url.protocol.replace(':', '')}.`);
  }
  const segments = url.pathname.split('/').filter(Boolean);
  const start = segments.indexOf('01');
  if (start === -1) return invalid('The path has no /01/<GTIN> segment.');
  const pairs = segments.slice(start);
  if (pairs.length % 2 !== 0) return invalid('The path after /01/ must alternate application identifiers and values.');

  const gtin = decodeSegment(pairs[1] ?? '') ?? '';
  const gtinCheck = checkGtin14(gtin);
  if (!gtinCheck.ok) {
    return invalid(`The GTIN is not valid: ${gtinCheck.message}.`, {
      provided: gtin,
      ...(gtinCheck.reason === 'check-digit'
        ? { expected: gtinCheck.expected }
        : { expected: '14 digits with a GS1 check digit' }),
    });
  }
  const link: DigitalLink = { origin: url.origin, gtin };
  const seen: Qualifier[] = [];
  for (let i = 2; i < pairs.length; i += 2) {
    const ai = pairs[i] as string;
    if (!(ai in qualifiers)) return invalid(`/${ai}/ is not a qualifier of /01/ that this service reads (22, 10 or 21).`);
    const qualifier = ai as Qualifier;
    if (seen.includes(qualifier)) return invalid(`/${ai}/ appears twice.`);
    seen.push(qualifier);
    const value = decodeSegment(pairs[i + 1] ?? '');
    if (value === undefined) return invalid(`The value after /${ai}/ has a broken percent-encoding.`);
    const problem = checkAi82Value(qualifiers[qualifier], value);
    if (problem) return invalid(`The ${problem}.`, { ai, provided: value });
    link[qualifiers[qualifier]] = value;
  }
  const order = seen.join(',');
  const accepted = ['', '22', '10', '21', '22,10', '22,21', '21,10', '10,21', '22,21,10', '22,10,21'];
  if (!accepted.includes(order)) {
    return invalid('Qualifiers must follow /01/ as /22/, then /21/ and /10/ in either order.', { order: seen });
  }

  const expiry = url.searchParams.getAll('17');
  if (expiry.length > 1) return invalid('AI 17 (expiry) appears twice.');
  if (expiry[0] !== undefined) {
    if (!isValidYymmdd(expiry[0])) return invalid('AI 17 (expiry) must be a real date as YYMMDD.', { provided: expiry[0] });
    link.expiry = expiry[0];
  }
  const signatures = [...url.searchParams.getAll('sig'), ...url.searchParams.getAll('8030')];
  if (signatures.length === 0) {
    return {
      ok: false,
      problem: { code: 'MISSING_SIGNATURE', message: 'The link has no signature (query parameter sig or 8030).' },
    };
  }
  if (signatures.length > 1) return invalid('The link carries more than one signature.');
  const signature = signatures[0] as string;
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(signature)) return invalid('The signature is not base64url (A–Z a–z 0–9 - _, no padding).');
  link.signature = signature;
  return { ok: true, link };
}

const encode = (value: string) =>
  encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/**
 * Writes a link. `spec` order puts /21/ before /10/ as interface-spec.md shows it; `gs1` order puts
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
