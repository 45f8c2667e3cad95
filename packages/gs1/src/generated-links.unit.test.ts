import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkAi82Value } from './ai82.ts';
import { type DigitalLink, formatDigitalLink, isValidYymmdd, parseDigitalLink } from './digital-link.ts';
import { parseDlUri } from './dl-syntax.ts';
import { gs1CheckDigit } from './gtin.ts';

// Every link Hallmark writes, from any input code generation accepts, must read under GS1's syntax:
// in GS1 order exactly as the syntax engine reads it; in the interface spec's order (/21/ before
// /10/) with only that one difference allowed (docs/SIGNING.md).
const AI82 = '!"%&\'()*+,-./0123456789:;<=>?ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz';
const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

const gtin = fc.stringMatching(/^[0-9]{13}$/).map((body) => `${body}${gs1CheckDigit(body)}`);
const ai82Value = fc
  .string({ unit: fc.constantFrom(...AI82), minLength: 1, maxLength: 20 })
  .filter((value) => checkAi82Value('value', value) === undefined);
const expiry = fc
  .tuple(fc.integer({ min: 0, max: 99 }), fc.integer({ min: 1, max: 12 }), fc.integer({ min: 0, max: 31 }))
  .map(([y, m, d]) => [y, m, d].map((n) => String(n).padStart(2, '0')).join(''))
  .filter(isValidYymmdd);
const signature = fc.string({ unit: fc.constantFrom(...BASE64URL), minLength: 86, maxLength: 86 });
const link: fc.Arbitrary<DigitalLink> = fc.record(
  {
    origin: fc.constantFrom('https://id.brand.com', 'http://localhost:8080', 'https://resolver.example.org/p'),
    gtin,
    serial: ai82Value,
    batch: ai82Value,
    variant: ai82Value,
    expiry,
    signature,
  },
  { requiredKeys: ['origin', 'gtin', 'serial', 'signature'] },
);

describe('every link Hallmark generates', () => {
  it('reads exactly as the GS1 syntax engine reads it, in GS1 order', () => {
    fc.assert(
      fc.property(link, (l) => {
        const uri = formatDigitalLink(l, 'gs1');
        const strict = parseDlUri(uri);
        expect(strict, uri).toMatchObject({ ok: true });
        expect(parseDigitalLink(uri)).toEqual({ ok: true, link: { ...l, origin: new URL(l.origin).origin } });
      }),
      { numRuns: 500 },
    );
  });

  it('reads in the spec order, /21/ before /10/ being the one difference from GS1 allowed', () => {
    fc.assert(
      fc.property(link, (l) => {
        const uri = formatDigitalLink(l, 'spec');
        expect(parseDlUri(uri, { permitSerialBeforeBatch: true }), uri).toMatchObject({ ok: true });
        expect(parseDlUri(uri).ok).toBe(l.batch === undefined);
        expect(parseDigitalLink(uri)).toMatchObject({
          ok: true,
          link: { gtin: l.gtin, serial: l.serial, signature: l.signature },
        });
      }),
      { numRuns: 500 },
    );
  });

  it('carries the signature in 8030 just as well', () => {
    const l: DigitalLink = {
      origin: 'https://id.brand.com',
      gtin: '09506000134352',
      serial: 'S/1',
      batch: 'L1',
      signature: 'A'.repeat(86),
    };
    const uri = `${formatDigitalLink({ origin: l.origin, gtin: l.gtin, serial: 'S/1', batch: 'L1' }, 'gs1')}?8030=${l.signature}`;
    expect(parseDlUri(uri)).toMatchObject({ ok: true });
    expect(parseDigitalLink(uri)).toEqual({ ok: true, link: l });
  });
});
