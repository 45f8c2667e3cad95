import { describe, expect, it } from 'vitest';
import { decompressDigitalLink, looksCompressed } from './compressed-digital-link.ts';

// Vectors from GS1's compression library tests (github.com/gs1/gs1-compression, Python port of GS1's
// GS1DigitalLinkCompressionPrototype; tests/test_decompress): compressed URI → uncompressed URI.
describe('decompressDigitalLink', () => {
  it('decompresses a GTIN alone', () => {
    const result = decompressDigitalLink('https://id.gs1.org/ARHKVAdpQg');
    expect(result).toMatchObject({ ok: true, uncompressed: 'https://id.gs1.org/01/09780345418913' });
  });

  it('decompresses a GTIN with a batch, a data attribute and a non-GS1 pair', () => {
    const result = decompressDigitalLink('http://example.org/AQnYUc1gmiERBhQ0ytiyZuAGOLc1TXgpNWCv1');
    expect(result).toMatchObject({
      ok: true,
      uncompressed: 'http://example.org/01/05412345000013/10/ABC%26%2B123?7003=1903061658&k1=v1',
    });
  });

  it('refuses a key other than a GTIN, data after the end, and what is not base64', () => {
    expect(decompressDigitalLink('https://id.gs1.org/QUCO_anbfA').ok).toBe(false);
    expect(decompressDigitalLink('https://id.gs1.org/ARHKVAdpQgAB').ok).toBe(false);
    expect(looksCompressed('01')).toBe(false);
    expect(looksCompressed('foo.html')).toBe(false);
  });
});
