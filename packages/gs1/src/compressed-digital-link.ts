/**
 * Decompression of compressed GS1 Digital Link URIs (GS1 Digital Link standard 1.2, "Compression",
 * the binary format of GS1's compression prototype): the path's last segment is URI-safe base64 of a
 * bit string of `<AI><value>` elements, each AI as 4-bit digits (or an 8-bit code standing for a
 * common sequence of AIs), each value by the AI's format: fixed-length digits as one binary number,
 * variable-length digits with a length prefix, alphanumerics with a 3-bit encoding and a length.
 * Non-GS1 `key=value` pairs start with the nibble F. Only decompression: Hallmark never prints
 * compressed links.
 */

const base64Alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const hexAlphabet = '0123456789ABCDEF';

/** How long an AI is, by its first two digits (GS1 General Specifications, the AI table). */
// biome-ignore format: a table
const aiLength: Record<string, number> = {
  '00': 2,
  '01': 2,
  '02': 2,
  '10': 2,
  '11': 2,
  '12': 2,
  '13': 2,
  '15': 2,
  '16': 2,
  '17': 2,
  '20': 2,
  '21': 2,
  '22': 2,
  '23': 3,
  '24': 3,
  '25': 3,
  '30': 2,
  '31': 4,
  '32': 4,
  '33': 4,
  '34': 4,
  '35': 4,
  '36': 4,
  '37': 2,
  '39': 4,
  '40': 3,
  '41': 3,
  '42': 3,
  '70': 4,
  '71': 3,
  '72': 4,
  '80': 4,
  '81': 4,
  '82': 4,
  '90': 2,
  '91': 2,
  '92': 2,
  '93': 2,
  '94': 2,
  '95': 2,
  '96': 2,
  '97': 2,
  '98': 2,
  '99': 2,
};

/** A value's parts: N digits or X characters, fixed (`fixed`) or at most (`max`) long. */
type Part = { kind: 'N' | 'X'; fixed?: number; max?: number };
const n = (fixed: number): Part => ({ kind: 'N', fixed });
const nv = (max: number): Part => ({ kind: 'N', max });
const xv = (max: number): Part => ({ kind: 'X', max });

/** The formats of the AIs a trade item's link carries (GS1 General Specifications). Others are refused by name. */
// biome-ignore format: a table
const formats: Record<string, Part[]> = {
  '00': [n(18)],
  '01': [n(14)],
  '02': [n(14)],
  '10': [xv(20)],
  '11': [n(6)],
  '12': [n(6)],
  '13': [n(6)],
  '15': [n(6)],
  '16': [n(6)],
  '17': [n(6)],
  '20': [n(2)],
  '21': [xv(20)],
  '22': [xv(20)],
  '240': [xv(30)],
  '241': [xv(30)],
  '242': [nv(6)],
  '243': [xv(20)],
  '250': [xv(30)],
  '251': [xv(30)],
  '254': [xv(20)],
  '30': [nv(8)],
  '37': [nv(8)],
  '414': [n(13)],
  '7003': [n(10)],
  '8006': [n(18)],
  '8030': [xv(90)],
  '90': [xv(30)],
  '91': [xv(90)],
  '92': [xv(90)],
  '93': [xv(90)],
  '94': [xv(90)],
  '95': [xv(90)],
  '96': [xv(90)],
  '97': [xv(90)],
  '98': [xv(90)],
  '99': [xv(90)],
};

/** 8-bit codes that stand for a sequence of AIs (the prototype's optimisation table, the entries for items). */
// biome-ignore format: a table
const sequences: Record<string, string[]> = {
  '0A': ['01', '22'],
  '0B': ['01', '10'],
  '0C': ['01', '21'],
  '0D': ['01', '17'],
  '0E': ['01', '7003'],
  '0F': ['01', '30'],
  '1A': ['01', '10', '21', '17'],
  '1B': ['01', '15'],
  '1C': ['01', '11'],
  '1D': ['01', '16'],
  '1E': ['01', '91'],
  '1F': ['01', '10', '15'],
};

/** The path qualifiers of a GTIN, in GS1's order; every other AI goes to the query. */
const gtinQualifiers = ['22', '10', '21'];

export type DecompressResult =
  | { ok: true; uncompressed: string; ais: Record<string, string>; other: Record<string, string> }
  | { ok: false; message: string };

class Bits {
  cursor = 0;
  constructor(readonly bits: string) {}
  get left(): number {
    return this.bits.length - this.cursor;
  }
  take(count: number): string {
    if (count > this.left) throw new Error('The compressed link ends in the middle of a value.');
    const taken = this.bits.slice(this.cursor, this.cursor + count);
    this.cursor += count;
    return taken;
  }
  number(count: number): bigint {
    return count === 0 ? 0n : BigInt(`0b${this.take(count)}`);
  }
}

const valueBits = (digits: number) => Math.ceil(digits * Math.log2(10) + 0.01);
const lengthBits = (max: number) => Math.ceil(Math.log2(max) + 0.01);

function readDigits(bits: Bits, digits: number): string {
  if (digits === 0) return '';
  return bits.number(valueBits(digits)).toString().padStart(digits, '0');
}

function readCharacters(bits: Bits, encoding: number, count: number): string {
  switch (encoding) {
    case 0:
      return readDigits(bits, count);
    case 1:
    case 2: {
      let text = '';
      for (let i = 0; i < count; i++) text += hexAlphabet[Number(bits.number(4))];
      return encoding === 1 ? text.toLowerCase() : text;
    }
    case 3: {
      let text = '';
      for (let i = 0; i < count; i++) text += base64Alphabet[Number(bits.number(6))];
      return text;
    }
    case 4: {
      let text = '';
      for (let i = 0; i < count; i++) text += String.fromCharCode(Number(bits.number(7)));
      return text;
    }
    default:
      throw new Error(`Unknown character encoding ${encoding} in the compressed link.`);
  }
}

function readValue(bits: Bits, ai: string): string {
  const parts = formats[ai];
  if (!parts) throw new Error(`The compressed link holds AI (${ai}), which this resolver does not read.`);
  let value = '';
  for (const part of parts) {
    if (part.kind === 'N' && part.fixed !== undefined) value += readDigits(bits, part.fixed);
    else if (part.kind === 'N' && part.max !== undefined) value += readDigits(bits, Number(bits.number(lengthBits(part.max))));
    else if (part.kind === 'X') {
      const encoding = Number(bits.number(3));
      const count = part.fixed ?? Number(bits.number(lengthBits(part.max ?? 1)));
      value += readCharacters(bits, encoding, count);
    }
  }
  return value;
}

/** Whether a path segment can be a compressed Digital Link (URI-safe base64, not all digits). */
export function looksCompressed(segment: string): boolean {
  return /^[A-Za-z0-9_-]{6,}$/.test(segment) && !/^\d+$/.test(segment);
}

const percentEncode = (text: string) => encodeURIComponent(text);

/**
 * Decompresses `https://host[/prefix]/<base64>[?query]` into the uncompressed Digital Link URI
 * (`https://host[/prefix]/01/<gtin>[/22/…][/10/…][/21/…][?<other AIs>&<non-GS1 pairs>]`). A
 * query string on the compressed URI is kept after the decompressed one.
 */
export function decompressDigitalLink(input: string): DecompressResult {
  let url: URL;
  try {
    url = new URL(input.trim());
  } catch {
    return { ok: false, message: 'Not a URL.' };
  }
  const segments = url.pathname.split('/').filter(Boolean);
  const last = segments.at(-1) ?? '';
  if (!looksCompressed(last)) return { ok: false, message: 'The path does not end in a compressed Digital Link.' };
  let binary = '';
  for (const char of last) binary += base64Alphabet.indexOf(char).toString(2).padStart(6, '0');
  const bits = new Bits(binary);
  const ais: Record<string, string> = {};
  const other: Record<string, string> = {};
  try {
    while (bits.left > 8) {
      const h1 = Number(bits.number(4));
      const h2 = Number(bits.number(4));
      if (h1 <= 9 && h2 <= 9) {
        const head = `${h1}${h2}`;
        const length = aiLength[head];
        if (length === undefined) throw new Error(`No GS1 AI starts with ${head}.`);
        let ai = head;
        for (let i = 2; i < length; i++) {
          const digit = Number(bits.number(4));
          if (digit > 9) throw new Error(`AI ${ai}… is not all digits.`);
          ai += digit;
        }
        if (ai in ais) throw new Error(`AI (${ai}) appears twice.`);
        ais[ai] = readValue(bits, ai);
        continue;
      }
      const code = `${hexAlphabet[h1]}${hexAlphabet[h2]}`;
      const sequence = sequences[code];
      if (sequence) {
        for (const ai of sequence) {
          if (ai in ais) throw new Error(`AI (${ai}) appears twice.`);
          ais[ai] = readValue(bits, ai);
        }
        continue;
      }
      if (h1 === 15) {
        // A non-GS1 key=value pair: 7 bits of key length (the last 4 of them already read as h2).
        const keyLength = (h2 << 3) | Number(bits.number(3));
        let key = '';
        for (let i = 0; i < keyLength; i++) key += base64Alphabet[Number(bits.number(6))];
        const encoding = Number(bits.number(3));
        const count = Number(bits.number(7));
        other[key] = readCharacters(bits, encoding, count);
        continue;
      }
      throw new Error(`Unknown code ${code} in the compressed link.`);
    }
  } catch (error) {
    return { ok: false, message: (error as Error).message };
  }
  if (bits.left > 0 && /1/.test(bits.bits.slice(bits.cursor))) {
    return { ok: false, message: 'The compressed link has data after its last element.' };
  }
  const gtin = ais['01'];
  if (gtin === undefined) return { ok: false, message: 'The compressed link holds no GTIN (AI 01).' };
  const stem = `${url.origin}${segments
    .slice(0, -1)
    .map((segment) => `/${segment}`)
    .join('')}`;
  let path = `/01/${gtin}`;
  for (const qualifier of gtinQualifiers) {
    const value = ais[qualifier];
    if (value !== undefined) path += `/${qualifier}/${percentEncode(value)}`;
  }
  const query = [
    ...Object.keys(ais)
      .filter((ai) => ai !== '01' && !gtinQualifiers.includes(ai))
      .sort()
      .map((ai) => `${ai}=${percentEncode(ais[ai] as string)}`),
    ...Object.entries(other).map(([key, value]) => `${key}=${percentEncode(value)}`),
  ];
  const extra = url.search.length > 1 ? url.search.slice(1) : '';
  const queryString = [...query, ...(extra ? [extra] : [])].join('&');
  return { ok: true, uncompressed: `${stem}${path}${queryString ? `?${queryString}` : ''}`, ais, other };
}
