import { ISO3166_ALPHA2, ISO3166_NUMERIC, ISO4217_NUMERIC, MEDIA_TYPES, PACKAGE_TYPES } from './ai-table.ts';
import { gs1CheckDigit } from './gtin.ts';

/**
 * The content checks ("linters") that the GS1 Barcode Syntax Dictionary names for each component
 * of an AI's value, written from their published descriptions. Each answers undefined when the
 * value passes or a sentence saying what is wrong. Only `couponcode` and `couponposoffer` (AIs
 * 8110 and 8112, North American coupons) are not checked beyond their character set: docs/SIGNING.md.
 */
export type Linter = (value: string) => string | undefined;

const codeSet = (list: string) => new Set(list.split(' '));
const iso3166 = codeSet(ISO3166_NUMERIC);
const iso3166alpha2 = codeSet(ISO3166_ALPHA2);
const iso4217 = codeSet(ISO4217_NUMERIC);
const mediaTypes = codeSet(MEDIA_TYPES);
const packageTypes = codeSet(PACKAGE_TYPES);

const digits = /^[0-9]*$/;
const cset82 = /^[!"%&'()*+,\-./0-9:;<=>?A-Z_a-z]*$/;
const cset39 = /^[#\-/0-9A-Z]*$/;
const cset64 = /^[A-Za-z0-9\-_]*$/;
const CSET82_ORDER = '!"%&\'()*+,-./0123456789:;<=>?ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz';
const CSET32 = '23456789ABCDEFGHJKLMNPQRSTUVWXYZ';

function firstPrimes(count: number): number[] {
  const primes: number[] = [];
  for (let n = 2; primes.length < count; n++) if (primes.every((p) => n % p !== 0)) primes.push(n);
  return primes;
}
const PRIMES = firstPrimes(97);

function outside(value: string, allowed: RegExp): string | undefined {
  for (const char of value) if (!allowed.test(char)) return char;
  return undefined;
}

const csetLinter =
  (set: RegExp, name: string): Linter =>
  (value) => {
    if (set.test(value)) return undefined;
    return `contains ${JSON.stringify(outside(value, set))}, which is not in ${name}`;
  };

/** GS1 date YYMMDD; the century is the one that puts the year within 49 years back and 50 ahead. */
function yymmd0(value: string, now = new Date()): string | undefined {
  if (value.length !== 6) return value.length < 6 ? 'is too short for a date YYMMDD' : 'is too long for a date YYMMDD';
  if (!digits.test(value)) return 'is not a date YYMMDD (digits only)';
  const yy = Number(value.slice(0, 2));
  const current = now.getUTCFullYear() % 100;
  const century = yy - current >= 51 ? 1900 : yy - current > -50 ? 2000 : 2100;
  return yyyymmd0(`${century + yy}${value.slice(2)}`);
}

function yyyymmd0(value: string): string | undefined {
  if (value.length !== 8 || !digits.test(value)) return 'is not a date YYYYMMDD';
  const year = Number(value.slice(0, 4));
  const month = Number(value.slice(4, 6));
  const day = Number(value.slice(6, 8));
  if (month < 1 || month > 12) return `has month ${value.slice(4, 6)}, which is not 01 to 12`;
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1] as number;
  if (day > days) return `has day ${value.slice(6, 8)}, which month ${value.slice(4, 6)} does not have`;
  return undefined;
}

const twoDigits =
  (max: number, what: string): Linter =>
  (value) => {
    if (value.length !== 2 || !digits.test(value)) return `is not a two-digit ${what}`;
    return Number(value) > max ? `has ${what} ${value}, over ${max}` : undefined;
  };
const hh = twoDigits(23, 'hour');
const mi = twoDigits(59, 'minute');

function numberAtMost(value: string, max: number, what: string): string | undefined {
  if (value.length !== 10 || !digits.test(value)) return `is not a ten-digit ${what}`;
  return Number(value) > max ? `is not a valid ${what}` : undefined;
}

function gcppos1(value: string): string | undefined {
  if (value.length < 4) return 'is too short to hold a GS1 Company Prefix';
  return digits.test(value.slice(0, 4)) ? undefined : 'does not start with the digits of a GS1 Company Prefix';
}

function iban(value: string): string | undefined {
  if (value.length < 4) return 'is too short for an IBAN';
  if (!iso3166alpha2.has(value.slice(0, 2))) return 'does not start with an IBAN country code';
  if (value.length > 34) return 'is too long for an IBAN';
  if (value.length <= 10) return 'is too short for an IBAN';
  let sum = 0;
  const rotated = value.slice(4) + value.slice(0, 4);
  for (const char of rotated) {
    const weight = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ'.indexOf(char);
    if (weight === -1) return `contains ${JSON.stringify(char)}, which an IBAN cannot`;
    sum = (sum * (weight < 10 ? 10 : 100) + weight) % 97;
  }
  return sum === 1 ? undefined : 'has a wrong IBAN check';
}

function piece(value: string): string | undefined {
  if (!digits.test(value)) return 'is not digits';
  if (value.length === 0 || value.length % 2 !== 0) return 'is not a piece number and a total of equal length';
  const half = value.length / 2;
  const [number, total] = [value.slice(0, half), value.slice(half)];
  if (/^0+$/.test(number)) return 'has piece number zero';
  if (/^0+$/.test(total)) return 'has a total of zero pieces';
  return number > total ? 'has a piece number over the total' : undefined;
}

function positionInSequence(value: string): string | undefined {
  const match = /^([0-9]+)\/([0-9]+)$/.exec(value);
  if (!match) return 'is not <position>/<end>';
  const [, position = '', end = ''] = match;
  if (position.startsWith('0') || end.startsWith('0')) return 'has a number with a leading zero';
  const exceeds = position.length === end.length ? position > end : position.length > end.length;
  return exceeds ? 'has a position after the end' : undefined;
}

function csumalpha(value: string): string | undefined {
  if (value.length > PRIMES.length + 2) return 'is too long for its check character pair';
  if (value.length < 2) return 'is too short to hold its check character pair';
  let sum = 0;
  const body = value.slice(0, -2);
  for (let i = 0; i < body.length; i++) {
    const weight = CSET82_ORDER.indexOf(body[i] as string);
    if (weight === -1) return `contains ${JSON.stringify(body[i])}, which is not in set 82`;
    sum += weight * (PRIMES[body.length - 1 - i] as number);
  }
  sum %= 1021;
  const expected = `${CSET32[sum >> 5]}${CSET32[sum & 31]}`;
  return value.slice(-2) === expected
    ? undefined
    : `ends in check characters ${value.slice(-2)}; the value calls for ${expected}`;
}

const inList =
  (set: Set<string>, what: string): Linter =>
  (value) =>
    set.has(value) ? undefined : `${JSON.stringify(value)} is not ${what}`;

export const CSET_LINTERS: Record<'N' | 'X' | 'Y' | 'Z', Linter> = {
  N: csetLinter(digits, 'the digits 0-9'),
  X: csetLinter(cset82, 'GS1 character set 82'),
  Y: csetLinter(cset39, 'GS1 character set 39'),
  Z: (value) => {
    let pads = 0;
    while (pads < value.length && value[value.length - 1 - pads] === '=') pads++;
    if (pads > 2 || (pads > 0 && value.length % 3 !== 0)) return 'has misplaced base64url padding';
    return csetLinter(cset64, 'GS1 character set 64 (base64url)')(value.slice(0, value.length - pads));
  },
};

export const LINTERS: Record<string, Linter> = {
  csum: (value) => {
    if (!digits.test(value) || value.length === 0) return 'is not digits';
    const expected = gs1CheckDigit(value.slice(0, -1));
    return Number(value.slice(-1)) === expected
      ? undefined
      : `has check digit ${value.slice(-1)}; the digits before it call for ${expected}`;
  },
  csumalpha,
  gcppos1,
  gcppos2: (value) => (value.length < 2 ? 'is too short to hold a GS1 Company Prefix' : gcppos1(value.slice(1))),
  yymmd0: (value) => yymmd0(value),
  yymmdd: (value) => yymmd0(value) ?? (value.slice(4) === '00' ? 'has day 00, which this AI does not allow' : undefined),
  yyyymmd0,
  yyyymmdd: (value) => yyyymmd0(value) ?? (value.slice(6) === '00' ? 'has day 00, which this AI does not allow' : undefined),
  hh,
  mi,
  ss: twoDigits(59, 'second'),
  hhmi: (value) => (value.length !== 4 ? 'is not a time HHMI' : (hh(value.slice(0, 2)) ?? mi(value.slice(2)))),
  iso3166: inList(iso3166, 'an ISO 3166 country code'),
  iso3166999: (value) => (value === '999' ? undefined : inList(iso3166, 'an ISO 3166 country code or 999')(value)),
  iso3166alpha2: inList(iso3166alpha2, 'an ISO 3166 alpha-2 country code'),
  iso4217: inList(iso4217, 'an ISO 4217 currency code'),
  iso5218: (value) => (/^[0129]$/.test(value) ? undefined : 'is not an ISO 5218 sex code (0, 1, 2 or 9)'),
  mediatype: inList(mediaTypes, 'an AIDC media type'),
  packagetype: inList(packageTypes, 'a package type code'),
  iban,
  importeridx: (value) => (/^[-0-9A-Z_a-z]$/.test(value) ? undefined : 'is not one importer index character'),
  pieceoftotal: piece,
  posinseqslash: positionInSequence,
  pcenc: (value) => (/%(?![0-9A-Fa-f]{2})/.test(value) ? 'has a % not followed by two hex digits' : undefined),
  hasnondigit: (value) => (digits.test(value) ? 'must contain a character other than a digit' : undefined),
  nonzero: (value) => (!digits.test(value) ? 'is not digits' : /^0*$/.test(value) ? 'must not be zero' : undefined),
  nozeroprefix: (value) => (value.startsWith('0') ? 'must not start with 0' : digits.test(value) ? undefined : 'is not digits'),
  zero: (value) => (/^0+$/.test(value) ? undefined : 'must be 0'),
  hyphen: (value) => (/^-+$/.test(value) ? undefined : 'must be -'),
  yesno: (value) => (/^[01]$/.test(value) ? undefined : 'must be 0 or 1'),
  winding: (value) => (/^[019]$/.test(value) ? undefined : 'must be 0, 1 or 9'),
  latitude: (value) => numberAtMost(value, 1800000000, 'latitude'),
  longitude: (value) => numberAtMost(value, 3600000000, 'longitude'),
  couponcode: () => undefined,
  couponposoffer: () => undefined,
};
