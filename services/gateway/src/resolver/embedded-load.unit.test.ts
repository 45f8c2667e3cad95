import { describe, expect, it } from 'vitest';
import { isEmbeddedLoad } from './embedded-load.ts';

describe('isEmbeddedLoad', () => {
  it('takes a top-level navigation and a client that sends no fetch metadata as a view', () => {
    expect(isEmbeddedLoad({ 'sec-fetch-dest': 'document', 'sec-fetch-mode': 'navigate', 'sec-fetch-site': 'none' })).toBe(false);
    expect(isEmbeddedLoad({ 'sec-fetch-dest': 'document', 'sec-fetch-site': 'cross-site', 'sec-fetch-user': '?1' })).toBe(false);
    expect(isEmbeddedLoad({})).toBe(false);
    // Node's fetch (undici) sends Sec-Fetch-Mode but no destination: a program, not another page.
    expect(isEmbeddedLoad({ 'sec-fetch-mode': 'cors', accept: 'application/json' })).toBe(false);
  });

  it('takes an image, a script, a frame, a fetch from a page and a prefetch as embedded', () => {
    for (const destination of ['image', 'script', 'iframe', 'frame', 'style', 'empty', 'object', 'embed', 'worker']) {
      expect(isEmbeddedLoad({ 'sec-fetch-dest': destination }), destination).toBe(true);
    }
    expect(isEmbeddedLoad({ 'sec-fetch-dest': 'Image ' })).toBe(true);
    expect(isEmbeddedLoad({ 'sec-fetch-dest': 'document', 'sec-purpose': 'prefetch;prerender' })).toBe(true);
    expect(isEmbeddedLoad({ purpose: 'prefetch' })).toBe(true);
    expect(isEmbeddedLoad({ 'x-moz': 'prefetch' })).toBe(true);
  });

  it('takes a navigation another site started with no click (a meta refresh, location =) as embedded', () => {
    const navigation = { 'sec-fetch-dest': 'document', 'sec-fetch-mode': 'navigate' };
    expect(isEmbeddedLoad({ ...navigation, 'sec-fetch-site': 'cross-site' })).toBe(true);
    expect(isEmbeddedLoad({ ...navigation, 'sec-fetch-site': 'same-site' })).toBe(true);
    expect(isEmbeddedLoad({ ...navigation, 'sec-fetch-site': 'Cross-Site ', 'sec-fetch-user': '?0' })).toBe(true);
    // Our own pages' links (same-origin), and the scanned link opened by a phone (none), count.
    expect(isEmbeddedLoad({ ...navigation, 'sec-fetch-site': 'same-origin' })).toBe(false);
    expect(isEmbeddedLoad({ ...navigation, 'sec-fetch-site': 'none', 'sec-fetch-user': '?1' })).toBe(false);
    expect(isEmbeddedLoad({ ...navigation, 'sec-fetch-site': 'same-site', 'sec-fetch-user': '?1' })).toBe(false);
  });
});
