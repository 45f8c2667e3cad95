import { categories } from '@hallmark/contracts';
import { formatDigitalLink, objectGtin, parseDigitalLink, parseDlUri } from '@hallmark/gs1';
import { describe, expect, it } from 'vitest';
import { newServiceSerial } from './service-serial.ts';

// An auction object's link carries its category in AI 10 and its service serial in AI 21, in the
// interface spec's order (/21/ before /10/). Both values and the derived GTIN must pass GS1's
// syntax; the order is the one difference from GS1 that Hallmark's readers allow (docs/SIGNING.md).
describe("an auction object's link", () => {
  it.each(categories)('reads under GS1 syntax for category %s', (category) => {
    for (let i = 0; i < 50; i++) {
      const serial = newServiceSerial();
      const link = {
        origin: 'https://id.hallmark.example',
        gtin: objectGtin(serial),
        serial,
        batch: category,
        signature: 'A'.repeat(86),
      };
      const printed = formatDigitalLink(link, 'spec');
      expect(parseDigitalLink(printed)).toEqual({ ok: true, link });
      expect(parseDlUri(printed, { permitSerialBeforeBatch: true })).toMatchObject({ ok: true });
      expect(parseDlUri(formatDigitalLink(link, 'gs1'))).toMatchObject({ ok: true });
    }
  });
});
