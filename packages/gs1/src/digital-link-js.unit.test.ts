import { createRequire } from 'node:module';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatDigitalLink, parseDigitalLink } from './digital-link.ts';
import { gs1CheckDigit } from './gtin.ts';

// GS1's own JavaScript parser, as a second opinion on what our writer produces and our reader reads.
const { DigitalLink } = createRequire(import.meta.url)('digital-link.js') as {
  DigitalLink: (url: string) => {
    isValid(): boolean;
    getIdentifier(): Record<string, string>;
    getKeyQualifiers(): Record<string, string>;
    getAttributes(): Record<string, string>;
  };
};

// Set 82 without `"`: digital-link.js 1.4.3 wants `"` literal in a path, where URLs require %22
// (WHATWG URL, RFC 3986), which is what we write. Every other character is compared.
const ai82 = `!%&'()*+,-./0123456789:;<=>?ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz`.split('');
const ai82Value = fc
  .array(fc.constantFrom(...ai82), { minLength: 1, maxLength: 20 })
  .map((chars) => chars.join(''))
  .filter((value) => value !== '.' && value !== '..');
const gtin = fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 13, maxLength: 13 }).map((digits) => {
  const first13 = digits.join('');
  return `${first13}${gs1CheckDigit(first13)}`;
});
const yymmdd = fc
  .date({ min: new Date('2000-01-01'), max: new Date('2099-12-31'), noInvalidDate: true })
  .map((date) => date.toISOString().slice(2, 10).replaceAll('-', ''));
const signature = fc.uint8Array({ minLength: 64, maxLength: 64 }).map((bytes) => Buffer.from(bytes).toString('base64url'));

describe('our Digital Link writer and reader against digital-link.js', () => {
  it('agree on every field of random links in GS1 order', () => {
    fc.assert(
      fc.property(
        gtin,
        ai82Value,
        fc.option(ai82Value, { nil: undefined }),
        fc.option(yymmdd, { nil: undefined }),
        signature,
        (g, serial, batch, expiry, sig) => {
          const link = {
            origin: 'https://id.example.com',
            gtin: g,
            serial,
            ...(batch === undefined ? {} : { batch }),
            ...(expiry === undefined ? {} : { expiry }),
            signature: sig,
          };
          const url = formatDigitalLink(link, 'gs1');
          expect(parseDigitalLink(url)).toEqual({ ok: true, link });
          const theirs = DigitalLink(url);
          expect(theirs.isValid(), url).toBe(true);
          expect(theirs.getIdentifier()['01']).toBe(g);
          const qualifiers = theirs.getKeyQualifiers();
          expect(decodeURIComponent(qualifiers['21'] ?? '')).toBe(serial);
          if (batch !== undefined) expect(decodeURIComponent(qualifiers['10'] ?? '')).toBe(batch);
          const attributes = theirs.getAttributes();
          if (expiry !== undefined) expect(attributes['17']).toBe(expiry);
          expect(attributes.sig).toBe(sig);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('both refuse a GTIN whose check digit is wrong', () => {
    fc.assert(
      fc.property(gtin, fc.integer({ min: 1, max: 9 }), (g, shift) => {
        const wrong = `${g.slice(0, 13)}${(Number(g[13]) + shift) % 10}`;
        const url = `https://id.example.com/01/${wrong}/21/S1?sig=${'a'.repeat(86)}`;
        expect(parseDigitalLink(url).ok).toBe(false);
        expect(DigitalLink(url).isValid()).toBe(false);
      }),
      { numRuns: 100 },
    );
  });
});
