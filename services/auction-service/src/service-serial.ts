import { randomBytes } from 'node:crypto';

/** Crockford's base32: no I, L, O or U, so a serial read aloud or typed is hard to get wrong. */
const alphabet = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const base = alphabet.length;

/**
 * A service serial: `HM-` and 14 random base32 characters (70 bits from the CSPRNG) in groups of
 * five, the last group ending in a check character, e.g. `HM-7K2QD-M4X9P-0ZRTW`: 20 characters,
 * the most GS1's AI 21 allows. Guessing one that exists is hopeless; the check character (Luhn
 * mod 32) catches every mistyped character and most swaps of neighbours. Every character is safe in
 * a URL path and in GS1's AI 82 set.
 */
export function newServiceSerial(bytes: Uint8Array = randomBytes(10)): string {
  let bits = 0n;
  for (const byte of bytes) bits = (bits << 8n) | BigInt(byte);
  let body = '';
  for (let i = 0; i < 14; i += 1) {
    body += alphabet[Number(bits & 31n)];
    bits >>= 5n;
  }
  return `HM-${body.slice(0, 5)}-${body.slice(5, 10)}-${body.slice(10)}${checkCharacter(body)}`;
}

/** Luhn mod N over the base32 digits, N = 32. */
function checkCharacter(body: string): string {
  let factor = 2;
  let sum = 0;
  for (let i = body.length - 1; i >= 0; i -= 1) {
    let addend = factor * alphabet.indexOf(body[i] as string);
    factor = factor === 2 ? 1 : 2;
    addend = Math.floor(addend / base) + (addend % base);
    sum += addend;
  }
  return alphabet[(base - (sum % base)) % base] as string;
}

const shape = /^HM-([0-9A-HJKMNP-TV-Z]{5})-([0-9A-HJKMNP-TV-Z]{5})-([0-9A-HJKMNP-TV-Z]{4})([0-9A-HJKMNP-TV-Z])$/;

/** True when the text has the serial's shape and its check character matches. */
export function isValidServiceSerial(serial: string): boolean {
  const match = shape.exec(serial);
  return match !== null && checkCharacter(`${match[1]}${match[2]}${match[3]}`) === match[4];
}
